/**
 * The WAF interpreter of the throttling model (test/infra/waf-model.ts) on hand-built rules, in the
 * CloudFormation spelling a synthesized web ACL has: the text transformations of a custom key, the
 * scope-down statements, and a refusal of everything it does not understand.
 */
import { describe, expect, it } from 'vitest';
import { FirewallState, rateRuleOf, rateRulesOf, statementPredicate, textTransformation } from '#test/infra/waf-model.ts';

const transformations = (...types: string[]) => types.map((Type, Priority) => ({ Priority, Type }));
const hasAuthorization = {
  SizeConstraintStatement: {
    FieldToMatch: { SingleHeader: { Name: 'authorization' } },
    ComparisonOperator: 'GT',
    Size: 0,
    TextTransformations: transformations('NONE'),
  },
};
const uriPath = (PositionalConstraint: string, SearchString: string, TextTransformations = transformations('NONE')) => ({
  ByteMatchStatement: { FieldToMatch: { UriPath: {} }, PositionalConstraint, SearchString, TextTransformations },
});
const block = { Block: { CustomResponse: { ResponseCode: 429, CustomResponseBodyKey: 'Rule' } } };
const visibility = { CloudWatchMetricsEnabled: true, MetricName: 'Rule', SampledRequestsEnabled: true };
const rateRule = (name: string, priority: number, statement: Record<string, unknown>, action: unknown = block) => ({
  Name: name,
  Priority: priority,
  Statement: { RateBasedStatement: { Limit: 10, EvaluationWindowSec: 60, ...statement } },
  Action: action,
  VisibilityConfig: visibility,
});
const perCaller = (types: string[], scope: unknown = hasAuthorization) =>
  rateRule('PerCaller', 0, {
    AggregateKeyType: 'CUSTOM_KEYS',
    CustomKeys: [{ Header: { Name: 'authorization', TextTransformations: transformations(...types) } }],
    ScopeDownStatement: scope,
  });
const request = (caller: string | undefined, path = '/tenant/users', address = '192.0.2.1') => ({ caller, address, path });

describe('text transformations', () => {
  it('compresses white space: tabs, line breaks, form feeds, vertical tabs and no-break spaces become one space a run', () => {
    const compress = textTransformation(transformations('COMPRESS_WHITE_SPACE'), 'test');
    expect(compress('Bearer \t\n\r\f\v\u00a0 abc  def')).toBe('Bearer abc def');
    expect(compress('Bearer abc')).toBe('Bearer abc');
  });

  it('lowercases A to Z only, and applies the list in priority order, not in list order', () => {
    expect(textTransformation(transformations('LOWERCASE'), 'test')('Bearer ÄBC')).toBe('bearer Äbc');
    const reversed = [
      { Priority: 5, Type: 'LOWERCASE' },
      { Priority: 1, Type: 'COMPRESS_WHITE_SPACE' },
    ];
    expect(textTransformation(reversed, 'test')('BEARER \t  X')).toBe('bearer x');
    expect(textTransformation(transformations('NONE'), 'test')('Bearer  X')).toBe('Bearer  X');
  });

  it('refuses a transformation it does not model, or two of one priority', () => {
    expect(() => textTransformation(transformations('URL_DECODE'), 'test')).toThrow(/waf-model cannot read test/);
    expect(() =>
      textTransformation(
        [
          { Priority: 0, Type: 'NONE' },
          { Priority: 0, Type: 'LOWERCASE' },
        ],
        'test',
      ),
    ).toThrow(/priorities must differ/);
    expect(() => textTransformation([], 'test')).toThrow(/cannot read/);
  });
});

describe('aggregation keys', () => {
  it('makes every spelling of one token one caller with COMPRESS_WHITE_SPACE then LOWERCASE, and each spelling a caller with NONE', () => {
    const folded = rateRuleOf(perCaller(['COMPRESS_WHITE_SPACE', 'LOWERCASE']));
    const spellings = ['Bearer abc', 'bearer   abc', 'BEARER\tabc', 'Bearer \u00a0abc'];
    expect(new Set(spellings.map((caller) => folded?.keyOf(request(caller))))).toEqual(new Set(['bearer abc']));
    const raw = rateRuleOf(perCaller(['NONE']));
    expect(new Set(spellings.map((caller) => raw?.keyOf(request(caller)))).size).toBe(spellings.length);
  });

  it('leaves out of a custom-key rule a request without the header (AWS: omitted from its evaluation)', () => {
    const rule = rateRuleOf(
      rateRule('PerCaller', 0, {
        AggregateKeyType: 'CUSTOM_KEYS',
        CustomKeys: [{ Header: { Name: 'Authorization', TextTransformations: transformations('NONE') } }],
      }),
    );
    expect(rule?.inScope(request(undefined))).toBe(true);
    expect(rule?.keyOf(request(undefined))).toBeUndefined();
  });

  it('keys an IP rule on the address', () => {
    const rule = rateRuleOf(rateRule('PerAddress', 2, { AggregateKeyType: 'IP' }));
    expect(rule?.keyOf(request('Bearer a', '/x', '198.51.100.7'))).toBe('198.51.100.7');
    expect(rule?.keyOf(request(undefined, '/x', '198.51.100.7'))).toBe('198.51.100.7');
  });

  it('refuses other keys: forwarded addresses, two keys, a header the model requests do not carry', () => {
    expect(() => rateRuleOf(rateRule('R', 0, { AggregateKeyType: 'FORWARDED_IP' }))).toThrow(/AggregateKeyType/);
    expect(() =>
      rateRuleOf(
        rateRule('R', 0, {
          AggregateKeyType: 'CUSTOM_KEYS',
          CustomKeys: [{ Header: { Name: 'authorization', TextTransformations: transformations('NONE') } }, { IP: {} }],
        }),
      ),
    ).toThrow(/one key expected/);
    expect(() =>
      rateRuleOf(
        rateRule('R', 0, {
          AggregateKeyType: 'CUSTOM_KEYS',
          CustomKeys: [{ Header: { Name: 'x-api-key', TextTransformations: transformations('NONE') } }],
        }),
      ),
    ).toThrow(/no header but authorization/);
    expect(() =>
      rateRuleOf(rateRule('R', 0, { AggregateKeyType: 'IP', ForwardedIPConfig: { HeaderName: 'X-Forwarded-For' } })),
    ).toThrow(/unknown ForwardedIPConfig/);
  });
});

describe('scope-down statements', () => {
  it('tells a present Authorization header (GT 0) from none or an empty one', () => {
    const present = statementPredicate(hasAuthorization);
    expect(present(request('Bearer abc'))).toBe(true);
    expect(present(request(''))).toBe(false);
    expect(present(request(undefined))).toBe(false);
    expect(statementPredicate({ NotStatement: { Statement: hasAuthorization } })(request(undefined))).toBe(true);
  });

  it('matches the anonymous paths: STARTS_WITH a prefix, EXACTLY a path, in an OrStatement', () => {
    const anonymous = statementPredicate({
      OrStatement: {
        Statements: [
          uriPath('STARTS_WITH', '/auth/'),
          uriPath('STARTS_WITH', '/.well-known/'),
          uriPath('STARTS_WITH', '/docs'),
          uriPath('EXACTLY', '/openapi.json'),
          uriPath('EXACTLY', '/health'),
        ],
      },
    });
    for (const path of ['/auth/api/x.y.z', '/.well-known/jwks.json', '/docs', '/docs/swagger-ui.css', '/openapi.json', '/health'])
      expect(anonymous(request(undefined, path)), path).toBe(true);
    for (const path of ['/healthz', '/tenant/users', '/openapi.json/x', '/Auth/api/x', '/agent/heartbeat'])
      expect(anonymous(request(undefined, path)), path).toBe(false);
  });

  it('combines with AndStatement and NotStatement', () => {
    const tokenOffAnonymousPaths = statementPredicate({
      AndStatement: { Statements: [hasAuthorization, { NotStatement: { Statement: uriPath('STARTS_WITH', '/auth/') } }] },
    });
    expect(tokenOffAnonymousPaths(request('Bearer a', '/tenant'))).toBe(true);
    expect(tokenOffAnonymousPaths(request('Bearer a', '/auth/session'))).toBe(false);
    expect(tokenOffAnonymousPaths(request(undefined, '/tenant'))).toBe(false);
  });

  it('refuses what it would misread: another size test, a transformed path, another field or position, other statements', () => {
    const sized = { SizeConstraintStatement: { ...hasAuthorization.SizeConstraintStatement, Size: 10 } };
    expect(() => statementPredicate(sized)).toThrow(/only GT 0/);
    expect(() => statementPredicate(uriPath('STARTS_WITH', '/auth/', transformations('LOWERCASE')))).toThrow(/cannot read/);
    expect(() => statementPredicate(uriPath('CONTAINS', '/auth/'))).toThrow(/PositionalConstraint/);
    expect(() =>
      statementPredicate({
        ByteMatchStatement: {
          FieldToMatch: { QueryString: {} },
          PositionalConstraint: 'EXACTLY',
          SearchString: 'x',
          TextTransformations: transformations('NONE'),
        },
      }),
    ).toThrow(/FieldToMatch/);
    expect(() => statementPredicate({ GeoMatchStatement: { CountryCodes: ['XX'] } })).toThrow(/GeoMatchStatement/);
    expect(() => statementPredicate({ OrStatement: { Statements: [hasAuthorization] } })).toThrow(/Statements/);
    expect(() => statementPredicate({ ...hasAuthorization, NotStatement: { Statement: hasAuthorization } })).toThrow(
      /one statement kind/,
    );
  });
});

describe('rules of a web ACL', () => {
  const managed = (Name: string, OverrideAction: unknown) => ({
    Name,
    Priority: 0,
    Statement: { ManagedRuleGroupStatement: { VendorName: 'AWS', Name } },
    OverrideAction,
    VisibilityConfig: visibility,
  });

  it('reads every rate-based rule in priority order and skips managed rule groups, counting or blocking', () => {
    const rules = rateRulesOf({
      DefaultAction: { Allow: {} },
      Rules: [
        rateRule('PerAddress', 4, { AggregateKeyType: 'IP' }),
        managed('AWSManagedRulesAmazonIpReputationList', { Count: {} }),
        { ...managed('AWSManagedRulesKnownBadInputsRuleSet', { None: {} }), Priority: 1 },
        { ...perCaller(['COMPRESS_WHITE_SPACE', 'LOWERCASE']), Priority: 2 },
      ],
    });
    expect(rules.map((rule) => [rule.name, rule.limit, rule.windowSeconds])).toEqual([
      ['PerCaller', 10, 60],
      ['PerAddress', 10, 60],
    ]);
  });

  it('refuses a rule that only counts, a rule that is not rate-based, an override on anything but a managed group, a blocking default', () => {
    expect(() => rateRuleOf(rateRule('R', 0, { AggregateKeyType: 'IP' }, { Count: {} }))).toThrow(/Action/);
    expect(() =>
      rateRuleOf({ Name: 'R', Priority: 0, Statement: hasAuthorization, Action: block, VisibilityConfig: visibility }),
    ).toThrow(/only rate-based rules/);
    expect(() =>
      rateRuleOf({ ...rateRule('R', 0, { AggregateKeyType: 'IP' }), Action: undefined, OverrideAction: { Count: {} } }),
    ).toThrow();
    expect(() => rateRuleOf({ ...rateRule('R', 0, { AggregateKeyType: 'IP' }), RuleLabels: [{ Name: 'x' }] })).toThrow(
      /unknown RuleLabels/,
    );
    expect(() => rateRulesOf({ DefaultAction: { Block: {} }, Rules: [] })).toThrow(/DefaultAction/);
  });
});

describe('the rules at work', () => {
  const firewall = (delaySeconds: number) =>
    new FirewallState({
      rules: rateRulesOf({
        DefaultAction: { Allow: {} },
        Rules: [
          perCaller(['COMPRESS_WHITE_SPACE', 'LOWERCASE']),
          rateRule('PerAddress', 1, { AggregateKeyType: 'IP', Limit: 25 }),
        ],
      }),
      delaySeconds,
    });

  it('blocks an instance over its limit from the lag on, and every spelling of the same token with it', () => {
    const state = firewall(2);
    // 11 requests in second 0: over the limit of 10, blocked from second 0 + 1 + 2.
    for (let n = 0; n < 11; n++) expect(state.evaluate(request(n % 2 ? 'Bearer T' : 'bearer   t'), 0)).toBeUndefined();
    for (let second = 0; second < 3; second++) {
      state.tick(second);
      expect(state.evaluate(request('BEARER T'), second + 1) ?? 'through', `second ${second + 1}`).toBe(
        second + 1 < 3 ? 'through' : 'PerCaller',
      );
    }
    expect(state.evaluate(request('Bearer other'), 3)).toBeUndefined();
  });

  it('ends a request at the first rule that blocks it: later rules never count it', () => {
    const state = firewall(0);
    for (let n = 0; n < 11; n++) state.evaluate(request('Bearer T', '/x', '203.0.113.9'), 0);
    state.tick(0);
    // Blocked by PerCaller from second 1: the address rule (limit 25) does not see these 30.
    for (let n = 0; n < 30; n++) expect(state.evaluate(request('Bearer T', '/x', '203.0.113.9'), 1)).toBe('PerCaller');
    state.tick(1);
    expect(state.evaluate(request('Bearer U', '/x', '203.0.113.9'), 2)).toBeUndefined();
  });
});
