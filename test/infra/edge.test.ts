/**
 * The edge, asserted on the synthesized templates of the whole app (lib/service-app.ts, as bin/app.ts
 * builds it): a production stage is the service's stack and, after it, the edge stack in us-east-1
 * (WAF web ACL, viewer function and its KeyValueStore, origin secret and its rotation, the
 * distributions, their alarms, the probe); the service's API refuses whatever did not come through.
 * What each piece does at run time is shown on the twin (test/e2e/edge.test.ts) and by the throttling
 * model (throttling.test.ts).
 */
import { readFileSync } from 'node:fs';
import { Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { CachePolicy, OriginRequestPolicy } from 'aws-cdk-lib/aws-cloudfront';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import { bearerToken } from '#functions/core/auth/tokens.ts';
import { AUTHORIZER_CACHE_SECONDS, ORIGIN_HEADER } from '#functions/core/edge/origin-secret.ts';
import { anonymousPathsOf, maxEdgeFunctionBytes, viewerRequestCode } from '#functions/edge/viewer-request-code.ts';
import { routeKey, routes } from '#functions/routes.ts';
import {
  ANONYMOUS_PATHS_RULE,
  CALLER_KEY_TRANSFORMATIONS,
  MANAGED_RULE_GROUPS,
  PER_ADDRESS_RULE,
  PER_CALLER_RULE,
} from '#lib/edge-firewall.ts';
import {
  ADDRESS_RATE_LIMIT,
  ANONYMOUS_CALLER_RATE_LIMIT,
  CALLER_RATE_LIMIT,
  EDGE_RATE_WINDOW_SECONDS,
} from '#lib/edge-settings.ts';
import { EDGE_5XX_RATE_PERCENT, ORIGIN_LATENCY_P90_MS } from '#lib/edge-stack.ts';
import { originSecretName } from '#lib/origin-secret.ts';
import { functionWithOwnRole } from '#lib/project-function.ts';
import { serviceStacks } from '#lib/service-app.ts';
import { ServiceStack } from '#lib/service-stack.ts';
import { stageOf } from '#lib/stage.ts';
import { ORIGIN_AUTHORIZER_RESERVATION, reservations } from '#lib/throttling.ts';
import { testApp } from '#test/support/cdk-app.ts';
import { TEST_BASE_DOMAIN, productionStage, synthesizeProduction } from '#test/support/stages.ts';
import { rateRulesOf } from './waf-model.ts';

const BASE = TEST_BASE_DOMAIN;
const production = productionStage;

type Json = Record<string, unknown>;
interface CfnResource<P = Json> {
  Type: string;
  Properties: P;
}
interface WafRule {
  Name: string;
  Priority: number;
  Statement: Json;
  Action?: { Block?: { CustomResponse?: { ResponseCode: number; CustomResponseBodyKey: string } } };
  OverrideAction?: Json;
  VisibilityConfig: Json;
}
type WebAcl = {
  Scope: string;
  DefaultAction: Json;
  Rules: WafRule[];
  CustomResponseBodies: Record<string, { Content: string }>;
  VisibilityConfig: Json;
  DataProtectionConfig: Json;
};
interface Behavior {
  TargetOriginId: string;
  PathPattern?: string;
  CachePolicyId: string;
  OriginRequestPolicyId: string;
  FunctionAssociations?: { EventType: string }[];
}
interface DistributionConfig {
  Aliases: string[];
  IPV6Enabled: boolean;
  ViewerCertificate: Json;
  WebACLId: unknown;
  PriceClass: string;
  DefaultCacheBehavior: Behavior;
  CacheBehaviors?: Behavior[];
  Origins: { Id: string; DomainName: unknown; OriginCustomHeaders?: { HeaderName: string; HeaderValue: unknown }[] }[];
}

const synthesizeApp = synthesizeProduction;

function single<T>(items: readonly T[], what: string): T {
  if (items.length !== 1) throw new Error(`Expected exactly one ${what}, found ${items.length}`);
  return items[0] as T;
}
const resources = <P = Json>(template: Template, type: string) =>
  Object.entries(template.findResources(type)) as [string, CfnResource<P>][];
const webAclOf = (template: Template) => single(resources<WebAcl>(template, 'AWS::WAFv2::WebACL'), 'web ACL')[1].Properties;
const ruleOf = (template: Template, name: string) =>
  single(
    webAclOf(template).Rules.filter((rule) => rule.Name === name),
    name,
  );
const rateOf = (template: Template, name: string) => ruleOf(template, name).Statement.RateBasedStatement as Json;
const distributionsOf = (template: Template) =>
  Object.fromEntries(
    resources<{ DistributionConfig: DistributionConfig }>(template, 'AWS::CloudFront::Distribution').map(([id, resource]) => [
      id.replace(/[0-9A-F]{8}$/, ''),
      resource.Properties.DistributionConfig,
    ]),
  );
const problemOf = (settings: Json): string => {
  try {
    synthesizeApp(settings);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the stage to be refused');
};

describe('the edge stack', () => {
  let app: ReturnType<typeof synthesizeApp>;
  let edge: Template;

  beforeAll(() => {
    app = synthesizeApp();
    edge = app.edge as Template;
  });

  it('lives in us-east-1 and deploys after the service’s stack, whose API domain and token keys it takes', () => {
    expect(app.stacks.edge?.region).toBe('us-east-1');
    expect(app.stacks.edge?.account).toBe(production.account);
    expect(app.stacks.edge?.stackName).toBe('BiTenantAdmin-prod-edge');
    expect(app.stacks.edge?.dependencies).toContain(app.stacks.service);
    expect(app.stacks.service.dependencies).toEqual([]);
    app.service.resourceCountIs('AWS::CloudFront::Distribution', 0);
    app.service.resourceCountIs('Custom::CrossRegionExportWriter', 1);
    edge.resourceCountIs('Custom::CrossRegionExportReader', 1);
  });

  describe('web ACL', () => {
    it('is a CLOUDFRONT web ACL allowing by default, managed groups first, then the three rate rules', () => {
      expect(webAclOf(edge)).toMatchObject({ Scope: 'CLOUDFRONT', DefaultAction: { Allow: {} } });
      expect(webAclOf(edge).Rules.map((rule) => [rule.Priority, rule.Name])).toEqual([
        [0, MANAGED_RULE_GROUPS.IpReputation.name],
        [1, MANAGED_RULE_GROUPS.KnownBadInputs.name],
        [2, PER_CALLER_RULE],
        [3, ANONYMOUS_PATHS_RULE],
        [4, PER_ADDRESS_RULE],
      ]);
    });

    it('keys each caller on its bearer token however spelled: every spelling the service accepts is one key', () => {
      const rule = rateOf(edge, PER_CALLER_RULE);
      expect(rule).toMatchObject({ Limit: CALLER_RATE_LIMIT.fallback, EvaluationWindowSec: EDGE_RATE_WINDOW_SECONDS });
      expect(rule.CustomKeys).toEqual([
        {
          Header: {
            Name: 'authorization',
            TextTransformations: CALLER_KEY_TRANSFORMATIONS.map((Type, Priority) => ({ Priority, Type })),
          },
        },
      ]);
      // The model reads the synthesized rule (waf-model.ts applies its transformations); one list of spellings.
      const perCaller = single(
        rateRulesOf(webAclOf(edge)).filter((each) => each.name === PER_CALLER_RULE),
        PER_CALLER_RULE,
      );
      const token = 'ten_1.7-42.AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdE.ZyXwVuTsRqPoNmLkJiHgFeDcBa9876543210_-ZyXwV';
      const spellings = ['Bearer', 'bearer', 'BEARER', 'bEaReR'].flatMap((scheme) =>
        [1, 2, 5].map((spaces) => `${scheme}${' '.repeat(spaces)}${token}`),
      );
      for (const spelling of spellings) expect(bearerToken(spelling), spelling).toBe(token);
      const keys = new Set(spellings.map((caller) => perCaller.keyOf({ caller, address: '198.51.100.7', path: '/tenant' })));
      expect(keys.size).toBe(1);
      // What the service refuses may count apart: it never reaches a function (the viewer function refuses it too).
      for (const refused of [`Bearer ${token} `, ` Bearer ${token}`, `Bearer\t${token}`])
        expect(bearerToken(refused), refused).toBeUndefined();
    });

    it('limits each address on the routes without a token by their paths, whatever headers it adds', () => {
      const rule = rateOf(edge, ANONYMOUS_PATHS_RULE);
      expect(rule).toMatchObject({
        Limit: ANONYMOUS_CALLER_RATE_LIMIT.fallback,
        EvaluationWindowSec: EDGE_RATE_WINDOW_SECONDS,
        AggregateKeyType: 'IP',
      });
      // Scoped by the paths alone, one statement per path the viewer function lets through: no header to leave out.
      const paths = (rule.ScopeDownStatement as { OrStatement: { Statements: unknown[] } }).OrStatement.Statements;
      expect(paths).toHaveLength(anonymousPathsOf(routes).length);
      expect(JSON.stringify(rule.ScopeDownStatement)).not.toMatch(/SingleHeader|SizeConstraint/);
      const anonymous = single(
        rateRulesOf(webAclOf(edge)).filter((each) => each.name === ANONYMOUS_PATHS_RULE),
        ANONYMOUS_PATHS_RULE,
      );
      for (const route of routes.filter((each) => each.auth.length === 0)) {
        const path = route.path.replace(/\{[^}]+\}/g, 'x');
        for (const caller of [undefined, 'Bearer made-up'])
          expect(anonymous.inScope({ caller, address: '198.51.100.7', path }), `${routeKey(route)} ${caller}`).toBe(true);
      }
      for (const route of routes.filter((each) => each.auth.length > 0))
        expect(anonymous.inScope({ address: '198.51.100.7', path: route.path.replace(/\{[^}]+\}/g, 'x') }), routeKey(route)).toBe(
          false,
        );
    });

    it('limits each address on everything, and no rule names a header an attacker can leave out to escape', () => {
      expect(rateOf(edge, PER_ADDRESS_RULE)).toEqual({
        Limit: ADDRESS_RATE_LIMIT.fallback,
        EvaluationWindowSec: EDGE_RATE_WINDOW_SECONDS,
        AggregateKeyType: 'IP',
      });
    });

    it('answers 429 in the service’s error envelope with Retry-After, naming the limit passed', () => {
      const acl = webAclOf(edge);
      for (const name of [PER_CALLER_RULE, ANONYMOUS_PATHS_RULE, PER_ADDRESS_RULE]) {
        const response = ruleOf(edge, name).Action?.Block?.CustomResponse;
        expect(response, name).toMatchObject({ ResponseCode: 429, CustomResponseBodyKey: name });
        expect(JSON.parse(acl.CustomResponseBodies[name]?.Content ?? '')).toMatchObject({
          status: 'error',
          code: 'too_many_requests',
          requestId: '',
          message: expect.stringMatching(/^Too many requests: more than [\d,]+ in 60 seconds from /),
        });
      }
    });

    it('runs the managed rule groups in count mode unless the stage says block', () => {
      for (const group of Object.values(MANAGED_RULE_GROUPS)) {
        expect(ruleOf(edge, group.name)).toMatchObject({
          Statement: { ManagedRuleGroupStatement: { VendorName: 'AWS', Name: group.name } },
          OverrideAction: { Count: {} },
        });
      }
      const blocking = synthesizeApp({ managedRules: 'block' }).edge as Template;
      for (const group of Object.values(MANAGED_RULE_GROUPS))
        expect(ruleOf(blocking, group.name).OverrideAction).toEqual({ None: {} });
      expect(problemOf({ managedRules: 'sometimes' })).toMatch(/managedRules must be count or block/);
    });

    it('logs what it blocked or counted to aws-waf-logs-…, kept a month, tokens hashed, without cookies or paths; samples nothing', () => {
      const [, group] = single(
        resources(edge, 'AWS::Logs::LogGroup').filter(([id]) => id.startsWith('WafLogs')),
        'WAF log group',
      );
      expect(group.Properties).toMatchObject({ LogGroupName: 'aws-waf-logs-BiTenantAdmin-prod-edge', RetentionInDays: 30 });
      const [, logging] = single(resources(edge, 'AWS::WAFv2::LoggingConfiguration'), 'logging configuration');
      expect(logging.Properties).toMatchObject({
        RedactedFields: [{ UriPath: {} }],
        LoggingFilter: {
          DefaultBehavior: 'DROP',
          Filters: [
            {
              Behavior: 'KEEP',
              Requirement: 'MEETS_ANY',
              Conditions: ['BLOCK', 'COUNT', 'EXCLUDED_AS_COUNT'].map((Action) => ({ ActionCondition: { Action } })),
            },
          ],
        },
      });
      expect(problemOf({ wafLogRetentionDays: 45 })).toMatch(/wafLogRetentionDays must be one of/);
      // Tokens hashed and cookies replaced wherever WAF keeps request data (the rate rules' keys in the log too),
      // and no sampled requests, which would show the landing's login token in its path.
      expect(webAclOf(edge).DataProtectionConfig).toEqual({
        DataProtections: [
          { Field: { FieldType: 'SINGLE_HEADER', FieldKeys: ['authorization'] }, Action: 'HASH' },
          { Field: { FieldType: 'SINGLE_HEADER', FieldKeys: ['cookie'] }, Action: 'SUBSTITUTION' },
        ],
      });
      for (const config of [webAclOf(edge).VisibilityConfig, ...webAclOf(edge).Rules.map((rule) => rule.VisibilityConfig)])
        expect(config).toMatchObject({ SampledRequestsEnabled: false, CloudWatchMetricsEnabled: true });
    });

    it('alarms on each rule’s blocks, to the stack’s own ticket topic', () => {
      const topicId = single(
        Object.keys(edge.findResources('AWS::SNS::Topic')).filter((id) => id.startsWith('TicketAlarmsTopic')),
        'edge ticket topic',
      );
      const blockAlarms = resources(edge, 'AWS::CloudWatch::Alarm').filter(
        ([, alarm]) => alarm.Properties.MetricName === 'BlockedRequests',
      );
      expect(
        blockAlarms
          .map(
            ([, alarm]) =>
              (alarm.Properties.Dimensions as { Name: string; Value: string }[]).find((d) => d.Name === 'Rule')?.Value,
          )
          .sort(),
      ).toEqual(
        webAclOf(edge)
          .Rules.map((rule) => rule.Name)
          .sort(),
      );
      for (const [, alarm] of blockAlarms)
        expect(alarm.Properties).toMatchObject({
          Namespace: 'AWS/WAFV2',
          // The web ACL's metric name: a CloudFront web ACL's metrics have no Region dimension.
          Dimensions: expect.arrayContaining([{ Name: 'WebACL', Value: 'BiTenantAdmin-prod-edge-web-acl' }]),
          Statistic: 'Sum',
          Period: 300,
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
          EvaluationPeriods: 1,
          AlarmActions: [{ Ref: topicId }],
          OKActions: [{ Ref: topicId }],
          TreatMissingData: 'notBreaching',
        });
      expect(webAclOf(edge).VisibilityConfig).toMatchObject({ MetricName: 'BiTenantAdmin-prod-edge-web-acl' });
      edge.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: production.alarmEmail });
    });

    it('takes the limits from context, within what WAF takes', () => {
      const custom = synthesizeApp({ callerRateLimit: 1200, addressRateLimit: 3000 }, { anonymousCallerRateLimit: '600' })
        .edge as Template;
      expect(rateOf(custom, PER_CALLER_RULE).Limit).toBe(1200);
      expect(rateOf(custom, ANONYMOUS_PATHS_RULE).Limit).toBe(600);
      expect(rateOf(custom, PER_ADDRESS_RULE).Limit).toBe(3000);
      expect(webAclOf(custom).CustomResponseBodies[PER_CALLER_RULE]?.Content).toContain('more than 1,200 in 60 seconds');
      expect(problemOf({ callerRateLimit: 5 })).toMatch(/Context callerRateLimit must be a whole number from 10/);
      expect(problemOf({ anonymousCallerRateLimit: 'lots' })).toMatch(/anonymousCallerRateLimit/);
    });
  });

  describe('viewer function and token keys', () => {
    it('runs the viewer function on cloudfront-js-2.0 with the token keys’ KeyValueStore, within 10 KB', () => {
      const [, fn] = single(resources<Json>(edge, 'AWS::CloudFront::Function'), 'viewer function');
      const kvsId = single(Object.keys(edge.findResources('AWS::CloudFront::KeyValueStore')), 'KeyValueStore');
      expect(fn.Properties.FunctionConfig).toMatchObject({
        Runtime: 'cloudfront-js-2.0',
        KeyValueStoreAssociations: [{ KeyValueStoreARN: { 'Fn::GetAtt': [kvsId, 'Arn'] } }],
      });
      const code = fn.Properties.FunctionCode as string;
      expect(code).toBe(viewerRequestCode({ anonymousPaths: anonymousPathsOf(routes), acceptUnsigned: true }));
      expect(Buffer.byteLength(code)).toBeLessThanOrEqual(maxEdgeFunctionBytes);
      const refusing = synthesizeApp({ unsignedTokens: 'refuse' });
      const [, strict] = single(resources<Json>(refusing.edge as Template, 'AWS::CloudFront::Function'), 'viewer function');
      expect(strict.Properties.FunctionCode).toContain('"acceptUnsigned":false');
      refusing.service.hasResourceProperties('AWS::Lambda::Function', {
        Environment: { Variables: Match.objectLike({ UNSIGNED_TOKENS: 'refuse' }) },
      });
    });

    it('fills the KeyValueStore from the service’s token keys at deploy, reading only that secret and writing only that store', () => {
      const kvsId = single(Object.keys(edge.findResources('AWS::CloudFront::KeyValueStore')), 'KeyValueStore');
      const [, sync] = single(resources(edge, 'Custom::TokenKeysSync'), 'token keys sync');
      expect(sync.Properties.KeyValueStoreArn).toEqual({ 'Fn::GetAtt': [kvsId, 'Arn'] });
      const secretId = single(
        Object.keys(app.service.findResources('AWS::SecretsManager::Secret')).filter((id) => id.startsWith('TokenKeys')),
        'token keys secret',
      );
      app.service.hasResourceProperties('AWS::SecretsManager::Secret', {
        GenerateSecretString: {
          SecretStringTemplate: JSON.stringify({ current: '1' }),
          GenerateStringKey: 'k1',
          PasswordLength: 64,
        },
      });
      expect(app.service.toJSON().Resources[secretId]).toMatchObject({ DeletionPolicy: 'Retain' });
      const syncPolicy = JSON.stringify(
        resources(edge, 'AWS::IAM::Policy').find(([id]) => id.startsWith('TokenKeysSyncRole'))?.[1].Properties,
      );
      expect(syncPolicy).toContain('cloudfront-keyvaluestore:UpdateKeys');
      expect(syncPolicy).toContain('secretsmanager:GetSecretValue');
      expect(syncPolicy).not.toMatch(/"Resource":"\*"[^}]*keyvaluestore|keyvaluestore[^}]*"Resource":"\*"/);
    });
  });

  describe('origin secret', () => {
    it('is generated, named for the stage, and rotated every 30 days onto every distribution', () => {
      edge.hasResourceProperties('AWS::SecretsManager::Secret', {
        Name: originSecretName('prod'),
        GenerateSecretString: { PasswordLength: 48, ExcludePunctuation: true, IncludeSpace: false },
      });
      edge.hasResourceProperties('AWS::SecretsManager::RotationSchedule', {
        RotationRules: { ScheduleExpression: 'rate(30 days)' },
        RotateImmediatelyOnUpdate: false,
      });
      const [, rotation] = single(
        resources<{ Environment: { Variables: Json } }>(edge, 'AWS::Lambda::Function').filter(([id]) =>
          id.startsWith('OriginSecretRotation'),
        ),
        'rotation function',
      );
      const ids = Object.keys(edge.findResources('AWS::CloudFront::Distribution'));
      expect(JSON.stringify(rotation.Properties.Environment.Variables.ORIGIN_DISTRIBUTION_IDS)).toBe(
        JSON.stringify({ 'Fn::Join': ['', ids.flatMap((id, index) => [...(index ? [','] : []), { Ref: id }])] }),
      );
    });

    it('with a front end that keeps its own distribution, is rotated onto that one too', () => {
      const kept = synthesizeApp({ frontEnd: { distributionId: 'E2FRONTEND123' } }).edge as Template;
      const rotation = resources<{ Environment: { Variables: Json } }>(kept, 'AWS::Lambda::Function').find(([id]) =>
        id.startsWith('OriginSecretRotation'),
      );
      expect(JSON.stringify(rotation?.[1].Properties.Environment.Variables.ORIGIN_DISTRIBUTION_IDS)).toContain('E2FRONTEND123');
      expect(JSON.stringify(kept.findResources('AWS::IAM::Policy'))).toContain('distribution/E2FRONTEND123');
    });
  });

  describe('distributions', () => {
    it('serve api.<base> and, with no front end, every path of the tenant domains to the API: HTTPS, TLS 1.2+, IPv4 only', () => {
      const { ApiDistribution: api, TenantDistribution: tenants } = distributionsOf(edge);
      expect(api?.Aliases).toEqual([`api.${BASE}`]);
      expect(tenants?.Aliases).toEqual([`*.${BASE}`]);
      for (const config of [api, tenants]) {
        expect(config?.IPV6Enabled).toBe(false);
        expect(config?.ViewerCertificate).toEqual({
          AcmCertificateArn: production.edgeCertificateArn,
          MinimumProtocolVersion: 'TLSv1.2_2021',
          SslSupportMethod: 'sni-only',
        });
        expect(config?.WebACLId).toEqual({ 'Fn::GetAtt': ['WebAcl', 'Arn'] });
        expect(config?.PriceClass).toBe('PriceClass_100');
      }
    });

    it('send the API the origin secret by reference, every viewer header with CloudFront’s, nothing cached, through the viewer function', () => {
      const secretId = single(Object.keys(edge.findResources('AWS::SecretsManager::Secret')), 'origin secret');
      for (const config of Object.values(distributionsOf(edge))) {
        const origin = single(config.Origins, 'origin');
        expect(origin.OriginCustomHeaders).toEqual([
          {
            HeaderName: ORIGIN_HEADER,
            HeaderValue: { 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, ':SecretString:::}}']] },
          },
        ]);
        expect(config.DefaultCacheBehavior).toMatchObject({
          CachePolicyId: CachePolicy.CACHING_DISABLED.cachePolicyId,
          OriginRequestPolicyId: OriginRequestPolicy.ALL_VIEWER_AND_CLOUDFRONT_2022.originRequestPolicyId,
          FunctionAssociations: [expect.objectContaining({ EventType: 'viewer-request' })],
        });
      }
    });

    it('with a front-end origin, send only /auth/* and /.well-known/* of the tenant domains to the API, and scope the rate rules to the API', () => {
      const fronted = synthesizeApp({ frontEnd: { origin: 'bi-frontend.example.net' } }).edge as Template;
      const { TenantDistribution: tenants } = distributionsOf(fronted);
      const front = tenants?.Origins.find((origin) => origin.DomainName === 'bi-frontend.example.net');
      expect(tenants?.DefaultCacheBehavior).toMatchObject({
        TargetOriginId: front?.Id,
        OriginRequestPolicyId: OriginRequestPolicy.ALL_VIEWER.originRequestPolicyId,
      });
      expect(tenants?.DefaultCacheBehavior.FunctionAssociations).toBeUndefined();
      expect(tenants?.CacheBehaviors?.map((behavior) => behavior.PathPattern)).toEqual(['/auth/*', '/.well-known/*']);
      for (const behavior of tenants?.CacheBehaviors ?? []) expect(behavior.TargetOriginId).not.toBe(front?.Id);
      // The rate rules count the API's requests only: the front end's pages and assets are not the API's to limit.
      const rules = rateRulesOf(webAclOf(fronted));
      for (const name of [PER_ADDRESS_RULE, PER_CALLER_RULE]) {
        const rule = single(
          rules.filter((each) => each.name === name),
          name,
        );
        const request = { caller: 'Bearer t', address: '198.51.100.7' };
        expect(rule.inScope({ ...request, host: `acme-1.${BASE}`, path: '/dashboards/7' }), name).toBe(false);
        expect(rule.inScope({ ...request, host: `acme-1.${BASE}`, path: '/auth/session' }), name).toBe(true);
        expect(rule.inScope({ ...request, host: `API.${BASE}`, path: '/tenants' }), name).toBe(true);
      }
      // The anonymous paths' rule too: the front end's own /docs or /health on a tenant domain is not the API's.
      const anonymous = single(
        rules.filter((each) => each.name === ANONYMOUS_PATHS_RULE),
        ANONYMOUS_PATHS_RULE,
      );
      expect(anonymous.inScope({ address: '198.51.100.7', host: `acme-1.${BASE}`, path: '/docs/x' })).toBe(false);
      expect(anonymous.inScope({ address: '198.51.100.7', host: `acme-1.${BASE}`, path: '/health' })).toBe(false);
      expect(anonymous.inScope({ address: '198.51.100.7', host: `api.${BASE}`, path: '/docs/x' })).toBe(true);
      expect(anonymous.inScope({ address: '198.51.100.7', host: `acme-1.${BASE}`, path: '/auth/api/token' })).toBe(true);
      // The API's behaviours on the tenant domains run the viewer function; the front end's does not.
      for (const behavior of tenants?.CacheBehaviors ?? [])
        expect(behavior.FunctionAssociations, behavior.PathPattern).toEqual([
          expect.objectContaining({ EventType: 'viewer-request' }),
        ]);
    });

    it('with the front end’s own distribution, leave the tenant domains to it, and scope the rate rules to the API there too', () => {
      const kept = synthesizeApp({ frontEnd: { distributionId: 'E2FRONTEND123' } });
      expect(Object.keys(distributionsOf(kept.edge as Template))).toEqual(['ApiDistribution']);
      expect(Object.keys((kept.edge as Template).toJSON().Outputs)).not.toContain('TenantDomainTarget');
      expect(JSON.stringify(kept.service.toJSON().Outputs.ApiOriginDomainName)).toContain('RegionalDomainName');
      const perAddress = single(
        rateRulesOf(webAclOf(kept.edge as Template)).filter((rule) => rule.name === PER_ADDRESS_RULE),
        PER_ADDRESS_RULE,
      );
      expect(perAddress.inScope({ address: '198.51.100.7', host: `acme-1.${BASE}`, path: '/dashboards/7' })).toBe(false);
      expect(perAddress.inScope({ address: '198.51.100.7', host: `acme-1.${BASE}`, path: '/auth/session' })).toBe(true);
    });

    it('alarm on 5xx rates and origin latency (with the additional metrics on), each distribution', () => {
      const ids = Object.keys(edge.findResources('AWS::CloudFront::Distribution'));
      for (const id of ids) {
        edge.hasResourceProperties('AWS::CloudFront::MonitoringSubscription', {
          DistributionId: { Ref: id },
          MonitoringSubscription: { RealtimeMetricsSubscriptionConfig: { RealtimeMetricsSubscriptionStatus: 'Enabled' } },
        });
        for (const [metric, statistic, threshold] of [
          ['5xxErrorRate', { Statistic: 'Average' }, EDGE_5XX_RATE_PERCENT],
          ['OriginLatency', { ExtendedStatistic: 'p90' }, ORIGIN_LATENCY_P90_MS],
        ] as const)
          edge.hasResourceProperties('AWS::CloudWatch::Alarm', {
            Namespace: 'AWS/CloudFront',
            MetricName: metric,
            Dimensions: Match.arrayWith([
              { Name: 'DistributionId', Value: { Ref: id } },
              { Name: 'Region', Value: 'Global' },
            ]),
            ...statistic,
            Period: 60,
            Threshold: threshold,
            ComparisonOperator: 'GreaterThanOrEqualToThreshold',
            EvaluationPeriods: 5,
            DatapointsToAlarm: 3,
            TreatMissingData: 'notBreaching',
          });
        expect([EDGE_5XX_RATE_PERCENT, ORIGIN_LATENCY_P90_MS]).toEqual([2, 5000]);
      }
    });
  });

  describe('settings that bound the edge', () => {
    it('refuses per-address limits that would let one address empty a route’s bucket, naming it; $default aside', () => {
      // 12,000 a minute is 200 a second: every token route's bucket (apiRateLimit 200).
      const address = problemOf({ addressRateLimit: 12_000 });
      expect(address).toContain("The edge's per-address limits would let one address empty these routes' buckets");
      expect(address).toMatch(/GET \/tenants: one address may send it 200 a second \(addressRateLimit 12000 in 60 s\)/);
      expect(address).not.toContain('$default');
      // 3,000 a minute is 50 a second: an anonymous route's bucket (anonymousRateLimit 50).
      expect(problemOf({ anonymousCallerRateLimit: 3_000 })).toMatch(/GET \/health: one address may send it 50 a second/);
      // Raising the bucket instead is the other way out.
      expect(synthesizeApp({ addressRateLimit: 12_000, apiRateLimit: 201 }).edge).toBeDefined();
    });

    it('rotates the origin secret every originSecretRotationDays, 1 to 365, and lets the rotation read the web ACL its updates name', () => {
      synthesizeApp({ originSecretRotationDays: 7 }).edge?.hasResourceProperties('AWS::SecretsManager::RotationSchedule', {
        RotationRules: { ScheduleExpression: 'rate(7 days)' },
      });
      for (const days of [0, 366])
        expect(problemOf({ originSecretRotationDays: days })).toMatch(
          /originSecretRotationDays must be a whole number from 1 to 365/,
        );
      const rotationPolicy = JSON.stringify(
        resources(edge, 'AWS::IAM::Policy').find(([id]) => id.startsWith('OriginSecretRotationRole'))?.[1].Properties,
      );
      expect(rotationPolicy).toContain('"Action":"wafv2:GetWebACL","Effect":"Allow","Resource":{"Fn::GetAtt":["WebAcl","Arn"]}');
    });

    it('reserves 10 executions for the origin authorizer, counted with the rest; none without reservations', () => {
      const reservedOf = (template: Template, prefix: string) =>
        resources<{ ReservedConcurrentExecutions?: number }>(template, 'AWS::Lambda::Function').find(([id]) =>
          id.startsWith(prefix),
        )?.[1].Properties.ReservedConcurrentExecutions;
      expect(reservedOf(app.service, 'OriginAuthorizer')).toBe(ORIGIN_AUTHORIZER_RESERVATION);
      const total = resources<{ ReservedConcurrentExecutions?: number }>(app.service, 'AWS::Lambda::Function').reduce(
        (sum, [, fn]) => sum + (fn.Properties.ReservedConcurrentExecutions ?? 0),
        0,
      );
      expect(total).toBe(
        app.stacks.service.settings && reservations(app.stacks.service.settings).reduce((sum, each) => sum + each.concurrency, 0),
      );
      expect(reservedOf(synthesizeApp({ reserveConcurrency: false }).service, 'OriginAuthorizer')).toBeUndefined();
    });

    it('keeps the token keys of a production stage when its stack goes, not an ephemeral one’s', () => {
      const tokenKeysOf = (template: Template) =>
        Object.entries(template.toJSON().Resources as Record<string, { Type: string; DeletionPolicy?: string }>).find(
          ([id, resource]) => id.startsWith('TokenKeys') && resource.Type === 'AWS::SecretsManager::Secret',
        )?.[1];
      expect(tokenKeysOf(app.service)?.DeletionPolicy).toBe('Retain');
      const ephemeral = testApp({ stage: 'dev', stages: { dev: { ephemeral: true, tenantBaseDomain: BASE } } });
      const stacks = serviceStacks(ephemeral, stageOf(ephemeral, { account: production.account, region: production.region }));
      expect(tokenKeysOf(Template.fromStack(stacks.service))?.DeletionPolicy).toBe('Delete');
    });

    it('refuses a function of its own role with a resource * that says no reason, which cdk-nag would otherwise let pass', () => {
      const stack = new Stack(testApp(), 'Wildcard');
      const statements = [new PolicyStatement({ actions: ['s3:ListAllMyBuckets'], resources: ['*'] })];
      const props = { entry: 'functions/edge/edge-probe.ts', description: 'x', environment: {}, statements };
      expect(() => functionWithOwnRole(stack, 'Loose', props)).toThrow(
        /Loose: a statement with the resource \* needs a wildcardReason/,
      );
      expect(() =>
        functionWithOwnRole(stack, 'Said', { ...props, wildcardReason: 'ListAllMyBuckets has no resource.' }),
      ).not.toThrow();
    });
  });

  describe('probe', () => {
    it('calls the API through the edge every minute; its alarm treats silence as failure', () => {
      edge.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: 'cron(* * * * ? *)',
        // The event as EventBridge makes it (a Scheduled Event of a few hundred bytes, far under
        // lambdaAsyncPayloadBytes), not an input of ours.
        Targets: [
          Match.objectLike({
            RetryPolicy: { MaximumEventAgeInSeconds: 60, MaximumRetryAttempts: 0 },
            Input: Match.absent(),
            InputPath: Match.absent(),
            InputTransformer: Match.absent(),
          }),
        ],
      });
      edge.hasResourceProperties('AWS::Lambda::Function', {
        Environment: { Variables: Match.objectLike({ EDGE_PROBE_URL: `https://api.${BASE}` }) },
      });
      edge.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'EdgeProbeSuccess',
        Namespace: 'BiTenantAdmin',
        Dimensions: Match.arrayWith([{ Name: 'stage', Value: 'prod' }]),
        Statistic: 'Minimum',
        Period: 60,
        ComparisonOperator: 'LessThanThreshold',
        Threshold: 1,
        EvaluationPeriods: 3,
        DatapointsToAlarm: 2,
        TreatMissingData: 'breaching',
      });
    });
  });

  describe('the service’s side', () => {
    it('turns execute-api off and puts the origin check on every route, $default included', () => {
      app.service.hasResourceProperties('AWS::ApiGatewayV2::Api', { DisableExecuteApiEndpoint: true });
      const [authorizerId, authorizer] = single(resources(app.service, 'AWS::ApiGatewayV2::Authorizer'), 'authorizer');
      expect(authorizer.Properties).toMatchObject({
        AuthorizerType: 'REQUEST',
        IdentitySource: [`$request.header.${ORIGIN_HEADER}`],
        EnableSimpleResponses: true,
        AuthorizerResultTtlInSeconds: AUTHORIZER_CACHE_SECONDS,
        AuthorizerPayloadFormatVersion: '2.0',
      });
      const routeResources = resources(app.service, 'AWS::ApiGatewayV2::Route');
      expect(routeResources).toHaveLength(routes.length + 1);
      for (const [id, route] of routeResources)
        expect(route.Properties, id).toMatchObject({ AuthorizationType: 'CUSTOM', AuthorizerId: { Ref: authorizerId } });
    });

    it('lets the authorizer read the origin secret of us-east-1 by name, and nothing else', () => {
      const policy = JSON.stringify(
        resources(app.service, 'AWS::IAM::Policy').find(([id]) => id.startsWith('OriginAuthorizerRole'))?.[1].Properties,
      );
      expect(policy).toContain(`:secretsmanager:us-east-1:`);
      expect(policy).toContain(`:secret:${originSecretName('prod')}-??????`);
      app.service.hasResourceProperties('AWS::Lambda::Function', {
        Environment: {
          Variables: Match.objectLike({
            // Its partial ARN: GetSecretValue takes it, and it names the region the secret is in.
            ORIGIN_SECRET_ARN: {
              'Fn::Join': [
                '',
                [
                  'arn:',
                  { Ref: 'AWS::Partition' },
                  `:secretsmanager:us-east-1:${production.account}:secret:${originSecretName('prod')}`,
                ],
              ],
            },
            BEHIND_EDGE: 'true',
          }),
        },
      });
    });

    it('without the edge: no authorizer, execute-api on, no edge stack', () => {
      const plain = synthesizeApp({ edge: false });
      expect(plain.edge).toBeUndefined();
      plain.service.resourceCountIs('AWS::ApiGatewayV2::Authorizer', 0);
      plain.service.hasResourceProperties('AWS::ApiGatewayV2::Api', { DisableExecuteApiEndpoint: false });
    });

    it('tells integrators the edge’s URL, and where each DNS record points', () => {
      app.service.hasOutput('ApiUrl', { Value: `https://api.${BASE}` });
      expect(Object.keys(app.service.toJSON().Outputs)).not.toContain('TenantDomainTarget');
      const { ApiDistribution: _api } = distributionsOf(edge);
      for (const output of [
        'ApiDomainTarget',
        'TenantDomainTarget',
        'ApiDistributionId',
        'TenantDistributionId',
        'WafLogGroupName',
      ])
        expect(Object.keys(edge.toJSON().Outputs), output).toContain(output);
      const withoutEdge = synthesizeApp({ edge: false }).service;
      const domainsId = single(Object.keys(withoutEdge.findResources('AWS::ApiGatewayV2::DomainName')), 'tenant domains');
      withoutEdge.hasOutput('TenantDomainTarget', { Value: { 'Fn::GetAtt': [domainsId, 'RegionalDomainName'] } });
    });
  });

  it('passes cdk-nag’s AwsSolutions rules, both stacks, with reasons for what it acknowledges', () => {
    for (const stack of [app.stacks.edge, app.stacks.service]) {
      const violations = new AwsSolutionsChecks().validateScope(stack as ServiceStack).violations as {
        ruleName: string;
        ruleExplanation?: string;
      }[];
      expect(
        violations.map((violation) => violation.ruleName),
        stack?.stackName,
      ).toEqual([]);
    }
  });
});

describe('stages and the edge', () => {
  it('is on for a production stage, off for an ephemeral one (the committed dev stage synthesizes without certificates)', () => {
    const { context } = JSON.parse(readFileSync('cdk.json', 'utf8')) as { context: Json };
    const dev = testApp(context);
    const stage = stageOf(dev, { account: '111111111111', region: 'us-west-2' });
    expect(stage).toMatchObject({ ephemeral: true, edge: false });
    expect(serviceStacks(dev, stage).edge).toBeUndefined();
    expect(dev.node.children.filter((child) => child instanceof ServiceStack)).toHaveLength(1);
  });

  it('refuses a production stage with the edge on and no edgeCertificateArn or frontEnd, saying how to go without', () => {
    const message = problemOf({ edgeCertificateArn: undefined, frontEnd: undefined });
    expect(message).toContain('with the edge on (the default)');
    expect(message).toContain('missing: edgeCertificateArn, frontEnd.');
    expect(message).toContain('"edge": false');
    expect(synthesizeApp({ edgeCertificateArn: undefined, frontEnd: undefined, edge: false }).edge).toBeUndefined();
  });

  it('takes frontEnd as none, an origin host or a distribution id, in cdk.json or on the command line', () => {
    expect(
      distributionsOf(synthesizeApp({}, { frontEnd: 'origin:bi-frontend.example.net' }).edge as Template).TenantDistribution,
    ).toBeDefined();
    expect(Object.keys(distributionsOf(synthesizeApp({}, { frontEnd: 'distribution:E2FRONTEND123' }).edge as Template))).toEqual([
      'ApiDistribution',
    ]);
    for (const bad of [
      'everything',
      { origin: 'not a host' },
      { distributionId: 'nope' },
      { origin: 'a.example.net', distributionId: 'E1' },
    ])
      expect(problemOf({ frontEnd: bad })).toMatch(/Context frontEnd must be "none"/);
  });

  it('refuses an edge certificate of a region other than us-east-1, or of another account', () => {
    expect(problemOf({ edgeCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc' })).toMatch(
      /Context edgeCertificateArn is a certificate of eu-west-1, but CloudFront takes certificates of us-east-1 only/,
    );
    expect(problemOf({ edgeCertificateArn: 'arn:aws:acm:us-east-1:210987654321:certificate/abc' })).toMatch(
      /edgeCertificateArn belongs to account 210987654321/,
    );
    expect(problemOf({ edgeCertificateArn: 'not-an-arn' })).toMatch(/edgeCertificateArn must be an ACM certificate ARN/);
  });

  it('lets an ephemeral stage turn the edge on, given both certificates, a front end and a known account and region', () => {
    const ephemeral = { ephemeral: true, tenantBaseDomain: BASE, edge: true };
    const problem = (settings: Json, defaults = {}) => {
      try {
        stageOf(testApp({ stage: 'dev', stages: { dev: settings } }), defaults);
      } catch (error) {
        return (error as Error).message;
      }
      return '';
    };
    expect(problem(ephemeral)).toContain('missing: tenantCertificateArn, edgeCertificateArn, frontEnd.');
    const complete = {
      ...ephemeral,
      tenantCertificateArn: production.tenantCertificateArn,
      edgeCertificateArn: production.edgeCertificateArn,
      frontEnd: 'none',
    };
    expect(problem(complete)).toMatch(/needs its account and region/);
    expect(problem(complete, { account: production.account, region: production.region })).toBe('');
    expect(problem({ ...ephemeral, edge: 'maybe' })).toMatch(/edge must be true or false/);
  });
});

describe('docs/operations.md on the edge', () => {
  // Lines wrap anywhere: the guide read as one line.
  const guide = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  const { service, edge } = synthesizeApp();

  it('lists the edge’s settings, outputs and alarms', () => {
    for (const setting of [
      'edge',
      'edgeCertificateArn',
      'frontEnd',
      'callerRateLimit',
      'anonymousCallerRateLimit',
      'addressRateLimit',
      'managedRules',
      'wafLogRetentionDays',
      'originSecretRotationDays',
      'unsignedTokens',
      'edgePriceClass',
    ])
      expect(guide, setting).toContain(`| \`${setting}\``);
    const outputs = [service, edge].flatMap((template) => Object.keys((template?.toJSON() as { Outputs: object }).Outputs));
    for (const output of outputs) expect(guide, output).toContain(`\`${output}\``);
    for (const [id] of resources(edge as Template, 'AWS::CloudWatch::Alarm'))
      expect(guide, id).toContain(`\`${id.replace(/[0-9A-F]{8}$/, '')}\``);
  });

  it('has every output the admin CLI asks for, in the stack it names', () => {
    const cli = readFileSync(new URL('../../bin/admin.ts', import.meta.url), 'utf8');
    const named = [...cli.matchAll(/\((the edge stack's|the) (\w+) output\)/g)].map(([, stack, output]) => ({
      template: (stack === 'the' ? service : edge) as Template,
      output: output as string,
    }));
    expect(named.map(({ output }) => output)).toEqual(
      expect.arrayContaining(['RolloutQueueUrl', 'SigningKeysSecretArn', 'TokenKeysSecretArn', 'TokenKeysKeyValueStoreArn']),
    );
    for (const { template, output } of named) expect(Object.keys(template.toJSON().Outputs), output).toContain(output);
    // ROLLOUT_QUEUE_URL is where `rollout start` queues a rollout's first step: the rollout queue's, no other.
    const [rolloutQueue] = Object.entries(service.findResources('AWS::SQS::Queue')).flatMap(([id]) =>
      /^RolloutQueue[0-9A-F]{8}$/.test(id) ? [id] : [],
    );
    expect(service.toJSON().Outputs.RolloutQueueUrl.Value).toEqual({ Ref: rolloutQueue });
  });

  it('cites AWS for the throttle semantics, the authorizer and the order at the edge', () => {
    for (const page of [
      'https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-throttling.html',
      'https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-lambda-authorizer.html',
      'https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/lambda-edge-event-request-response.html',
    ])
      expect(guide, page).toContain(page);
  });
});
