/**
 * The edge's WAF rate-based rules, read from the SYNTHESIZED web ACL (its CloudFormation JSON), for the
 * throttling model (throttle-model.ts). It understands exactly the statements the edge uses, and throws on
 * anything else, so a rule it cannot read is an error rather than a rule silently read as something else:
 *
 * - `RateBasedStatement` with `Limit`, `EvaluationWindowSec`, `AggregateKeyType` `IP` (the request's
 *   address), or `CUSTOM_KEYS` of one `Header` key (`authorization`, the only header a model request
 *   has) whose `TextTransformations` are among NONE, COMPRESS_WHITE_SPACE and LOWERCASE, applied in
 *   `Priority` order; an optional `ScopeDownStatement`;
 * - scope-down statements: `SizeConstraintStatement` on the `authorization` header, GT 0 (the header is
 *   there, not empty); `ByteMatchStatement` on `UriPath` (without transformation) or on the `host` header
 *   (NONE or LOWERCASE), STARTS_WITH or EXACTLY;
 *   `NotStatement`, `OrStatement`, `AndStatement` of those;
 * - rules whose action is `Block` (a rate rule that only counts would not stop anybody).
 *
 * Managed rule groups (`OverrideAction` and `ManagedRuleGroupStatement`) are skipped: the model has no
 * notion of bad inputs or bad addresses. AWS: a request "missing any of the components specified in the
 * aggregation keys" is "omitted from the rate-based rule evaluation and handling"
 * (https://docs.aws.amazon.com/waf/latest/APIReference/API_RateBasedStatementCustomKey.html).
 */

/**
 * What a rule sees of a request: the raw `Authorization` value (absent: none sent), the address, the
 * path, and the Host (absent: the API's own host, which is all the model's requests use but one test's).
 */
export interface WafRequest {
  caller?: string;
  address: string;
  path: string;
  host?: string;
}

/**
 * WAF notices a rate above a rule's limit with a lag: its estimate can trail the real rate for up to
 * several minutes, "usually below 30 seconds", AWS says. The model takes the usual case as given.
 */
export const WAF_DETECTION_SECONDS = 30;

type Json = Record<string, unknown>;

/** One rate-based rule, as the model applies it. */
export interface RateRule {
  name: string;
  priority: number;
  limit: number;
  windowSeconds: number;
  /** The aggregation instance a request counts against; undefined: the rule does not evaluate it. */
  keyOf(request: WafRequest): string | undefined;
  /** Whether the rule evaluates the request at all (its scope-down statement; true without one). */
  inScope(request: WafRequest): boolean;
}

/** The rate-based rules in front of the API, in the order WAF evaluates them, and WAF's detection lag. */
export interface Firewall {
  rules: readonly RateRule[];
  delaySeconds: number;
}

/** The host the model's requests go to when they name none: the API's (`api.<tenantBaseDomain>` of the test stages). */
export const apiHost = 'api.bi.example.com';

function fail(where: string, what: unknown): never {
  throw new Error(`waf-model cannot read ${where}: ${JSON.stringify(what)}`);
}

function object(value: unknown, where: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(where, value);
  return value as Json;
}

/** The object's keys must be among `allowed` (and `required` all present): anything else is not understood. */
function only(value: unknown, where: string, allowed: readonly string[], required: readonly string[] = allowed): Json {
  const json = object(value, where);
  const unknown = Object.keys(json).filter((key) => !allowed.includes(key));
  const missing = required.filter((key) => !(key in json));
  if (unknown.length > 0 || missing.length > 0)
    fail(`${where} (unknown ${unknown.join(', ') || 'none'}, missing ${missing.join(', ') || 'none'})`, value);
  return json;
}

/** The single statement kind of a `Statement` object. */
function kindOf(statement: unknown, where: string): [string, unknown] {
  const entries = Object.entries(object(statement, where));
  if (entries.length !== 1) fail(`${where} (one statement kind expected)`, statement);
  return entries[0] as [string, unknown];
}

const transformations = {
  NONE: (value: string) => value,
  // AWS: \f, \t, \n, \r, \v and the non-breaking space become spaces, then runs of spaces become one.
  COMPRESS_WHITE_SPACE: (value: string) => value.replace(/[\f\t\n\r\v\u00a0]/g, ' ').replace(/ {2,}/g, ' '),
  // AWS: uppercase letters A-Z to lowercase a-z.
  LOWERCASE: (value: string) => value.replace(/[A-Z]/g, (letter) => letter.toLowerCase()),
} as const;

/** A list of `TextTransformations` as one function, applied in `Priority` order (lowest first). */
export function textTransformation(list: unknown, where: string, allowed: readonly string[] = Object.keys(transformations)) {
  if (!Array.isArray(list) || list.length === 0) fail(where, list);
  const steps = list
    .map((item, index) => only(item, `${where}[${index}]`, ['Priority', 'Type']))
    .map(({ Priority, Type }) => {
      if (typeof Priority !== 'number' || typeof Type !== 'string' || !allowed.includes(Type)) fail(where, list);
      return { priority: Priority, apply: transformations[Type as keyof typeof transformations] };
    });
  if (new Set(steps.map((step) => step.priority)).size !== steps.length) fail(`${where} (priorities must differ)`, list);
  steps.sort((a, b) => a.priority - b.priority);
  return (value: string) => steps.reduce((text, step) => step.apply(text), value);
}

/** The `authorization` header's name, as a `SingleHeader` or a custom key's `Header` names it (any case). */
function authorizationHeader(name: unknown, where: string): void {
  if (typeof name !== 'string' || name.toLowerCase() !== 'authorization')
    fail(`${where} (the model's requests carry no header but authorization)`, name);
}

/** A scope-down statement as a predicate on a request. */
export function statementPredicate(statement: unknown, where = 'statement'): (request: WafRequest) => boolean {
  const [kind, body] = kindOf(statement, where);
  const at = `${where}.${kind}`;
  switch (kind) {
    case 'SizeConstraintStatement': {
      const { FieldToMatch, ComparisonOperator, Size, TextTransformations } = only(body, at, [
        'FieldToMatch',
        'ComparisonOperator',
        'Size',
        'TextTransformations',
      ]);
      const field = only(FieldToMatch, `${at}.FieldToMatch`, ['SingleHeader']);
      authorizationHeader(only(field.SingleHeader, `${at}.FieldToMatch.SingleHeader`, ['Name']).Name, at);
      if (ComparisonOperator !== 'GT' || Size !== 0) fail(`${at} (only GT 0, "the header is there", is understood)`, body);
      textTransformation(TextTransformations, `${at}.TextTransformations`, ['NONE']);
      return (request) => request.caller !== undefined && request.caller.length > 0;
    }
    case 'ByteMatchStatement': {
      const { FieldToMatch, PositionalConstraint, SearchString, TextTransformations } = only(body, at, [
        'FieldToMatch',
        'PositionalConstraint',
        'SearchString',
        'TextTransformations',
      ]);
      // The path, or the Host header (a front end behind the tenant distribution: what is the API's).
      const field = only(FieldToMatch, `${at}.FieldToMatch`, ['UriPath', 'SingleHeader'], []);
      if (Object.keys(field).length !== 1) fail(`${at}.FieldToMatch`, FieldToMatch);
      const host = field.SingleHeader !== undefined;
      if (host) {
        const name = only(field.SingleHeader, `${at}.FieldToMatch.SingleHeader`, ['Name']).Name;
        if (typeof name !== 'string' || name.toLowerCase() !== 'host') fail(`${at} (of headers, only host is understood)`, name);
      } else only(field.UriPath, `${at}.FieldToMatch.UriPath`, []);
      if (typeof SearchString !== 'string' || SearchString === '') fail(`${at}.SearchString`, SearchString);
      const transform = textTransformation(
        TextTransformations,
        `${at}.TextTransformations`,
        host ? ['NONE', 'LOWERCASE'] : ['NONE'],
      );
      const value = (request: WafRequest) => transform(host ? (request.host ?? apiHost) : request.path);
      if (PositionalConstraint === 'STARTS_WITH') return (request) => value(request).startsWith(SearchString);
      if (PositionalConstraint === 'EXACTLY') return (request) => value(request) === SearchString;
      return fail(`${at}.PositionalConstraint`, PositionalConstraint);
    }
    case 'NotStatement': {
      const inner = statementPredicate(only(body, at, ['Statement']).Statement, `${at}.Statement`);
      return (request) => !inner(request);
    }
    case 'OrStatement':
    case 'AndStatement': {
      const { Statements } = only(body, at, ['Statements']);
      if (!Array.isArray(Statements) || Statements.length < 2) fail(`${at}.Statements`, Statements);
      const predicates = Statements.map((inner, index) => statementPredicate(inner, `${at}.Statements[${index}]`));
      return kind === 'OrStatement'
        ? (request) => predicates.some((predicate) => predicate(request))
        : (request) => predicates.every((predicate) => predicate(request));
    }
    default:
      return fail(at, body);
  }
}

/** One rule of the web ACL: a rate rule, or undefined for a managed rule group; throws on anything else. */
export function rateRuleOf(rule: unknown, where = 'rule'): RateRule | undefined {
  const json = object(rule, where);
  const name = typeof json.Name === 'string' ? json.Name : fail(`${where}.Name`, json.Name);
  const at = `rule ${name}`;
  if ('OverrideAction' in json) {
    only(json, at, ['Name', 'Priority', 'Statement', 'OverrideAction', 'VisibilityConfig']);
    const [kind] = kindOf(json.Statement, `${at}.Statement`);
    if (kind !== 'ManagedRuleGroupStatement') fail(`${at} (an override action on anything but a managed rule group)`, rule);
    return undefined;
  }
  const { Priority, Statement, Action } = only(json, at, ['Name', 'Priority', 'Statement', 'Action', 'VisibilityConfig']);
  if (typeof Priority !== 'number') fail(`${at}.Priority`, Priority);
  only(Action, `${at}.Action`, ['Block']);
  const [kind, body] = kindOf(Statement, `${at}.Statement`);
  if (kind !== 'RateBasedStatement') fail(`${at}.Statement (only rate-based rules are understood)`, Statement);
  const statement = only(
    body,
    `${at}.RateBasedStatement`,
    ['Limit', 'EvaluationWindowSec', 'AggregateKeyType', 'CustomKeys', 'ScopeDownStatement'],
    ['Limit', 'EvaluationWindowSec', 'AggregateKeyType'],
  );
  const { Limit, EvaluationWindowSec, AggregateKeyType, CustomKeys, ScopeDownStatement } = statement;
  if (typeof Limit !== 'number' || Limit < 1) fail(`${at}.Limit`, Limit);
  if (typeof EvaluationWindowSec !== 'number' || ![60, 120, 300, 600].includes(EvaluationWindowSec))
    fail(`${at}.EvaluationWindowSec`, EvaluationWindowSec);
  const inScope =
    ScopeDownStatement === undefined ? () => true : statementPredicate(ScopeDownStatement, `${at}.ScopeDownStatement`);
  let keyOf: RateRule['keyOf'];
  if (AggregateKeyType === 'IP') {
    if (CustomKeys !== undefined) fail(`${at}.CustomKeys (with IP)`, CustomKeys);
    keyOf = (request) => request.address;
  } else if (AggregateKeyType === 'CUSTOM_KEYS') {
    if (!Array.isArray(CustomKeys) || CustomKeys.length !== 1) fail(`${at}.CustomKeys (one key expected)`, CustomKeys);
    const header = only(only(CustomKeys[0], `${at}.CustomKeys[0]`, ['Header']).Header, `${at}.CustomKeys[0].Header`, [
      'Name',
      'TextTransformations',
    ]);
    authorizationHeader(header.Name, `${at}.CustomKeys[0].Header.Name`);
    const transform = textTransformation(header.TextTransformations, `${at}.CustomKeys[0].Header.TextTransformations`);
    // A request without the header is not evaluated by the rule (AWS, above).
    keyOf = (request) => (request.caller === undefined ? undefined : transform(request.caller));
  } else return fail(`${at}.AggregateKeyType`, AggregateKeyType);
  return { name, priority: Priority, limit: Limit, windowSeconds: EvaluationWindowSec, keyOf, inScope };
}

/**
 * Every rate-based rule of a synthesized web ACL (the `Properties` of its `AWS::WAFv2::WebACL`), in the
 * order WAF evaluates them. Its default action must be Allow: the model lets through what no rule blocks.
 */
export function rateRulesOf(webAcl: unknown): RateRule[] {
  const acl = object(webAcl, 'web ACL');
  only(acl.DefaultAction, 'web ACL DefaultAction', ['Allow']);
  if (!Array.isArray(acl.Rules)) fail('web ACL Rules', acl.Rules);
  const rules = acl.Rules.map((rule, index) => rateRuleOf(rule, `Rules[${index}]`)).filter(
    (rule): rule is RateRule => rule !== undefined,
  );
  return rules.sort((a, b) => a.priority - b.priority);
}

/** The firewall of a synthesized web ACL, with WAF's usual detection lag unless told otherwise. */
export const firewallOf = (webAcl: unknown, delaySeconds = WAF_DETECTION_SECONDS): Firewall => ({
  rules: rateRulesOf(webAcl),
  delaySeconds,
});

/**
 * The rules at work: each second, each rule counts each aggregation instance's requests over its last
 * `windowSeconds` (those it blocked included: it evaluated them), and blocks an instance found over its
 * limit from `delaySeconds` later until its window is back under the limit. A request goes through the
 * rules in priority order; the first that blocks it ends its evaluation (Block is a terminating action),
 * so later rules never count it.
 */
export class FirewallState {
  private readonly rules: {
    rule: RateRule;
    /** Each second's counts, newest last, at most `windowSeconds` of them. */
    seconds: Map<string, number>[];
    /** Each instance's total over the window. */
    totals: Map<string, number>;
    /** From which second each instance over the limit is blocked. */
    blockedFrom: Map<string, number>;
  }[];

  constructor(private readonly firewall: Firewall) {
    this.rules = firewall.rules.map((rule) => ({ rule, seconds: [new Map()], totals: new Map(), blockedFrom: new Map() }));
  }

  /** Counts the request; the name of the rule that blocks it, or undefined when it goes through. */
  evaluate(request: WafRequest, second: number): string | undefined {
    for (const state of this.rules) {
      if (!state.rule.inScope(request)) continue;
      const key = state.rule.keyOf(request);
      if (key === undefined) continue;
      const current = state.seconds.at(-1) as Map<string, number>;
      current.set(key, (current.get(key) ?? 0) + 1);
      state.totals.set(key, (state.totals.get(key) ?? 0) + 1);
      const from = state.blockedFrom.get(key);
      if (from !== undefined && second >= from) return state.rule.name;
    }
    return undefined;
  }

  /** At the end of each second: judges the instances on their windows, then opens the next second. */
  tick(second: number): void {
    for (const state of this.rules) {
      const current = state.seconds.at(-1) as Map<string, number>;
      for (const key of current.keys())
        if ((state.totals.get(key) ?? 0) > state.rule.limit && !state.blockedFrom.has(key))
          state.blockedFrom.set(key, second + 1 + this.firewall.delaySeconds);
      for (const key of state.blockedFrom.keys())
        if ((state.totals.get(key) ?? 0) <= state.rule.limit) state.blockedFrom.delete(key);
      state.seconds.push(new Map());
      if (state.seconds.length > state.rule.windowSeconds) {
        const gone = state.seconds.shift() as Map<string, number>;
        for (const [key, count] of gone) {
          const left = (state.totals.get(key) ?? 0) - count;
          if (left > 0) state.totals.set(key, left);
          else state.totals.delete(key);
        }
      }
    }
  }
}
