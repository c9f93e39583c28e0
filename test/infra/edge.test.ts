/**
 * Per-caller limits at the edge: with a stage's `edge` on (the default for production), callers reach the
 * API only through a CloudFront distribution whose WAF web ACL, in a stack of its own in us-east-1, gives
 * each `Authorization` value and each anonymous address a rate-based limit of its own. Asserted on the
 * synthesized templates of the whole app (lib/service-app.ts, as bin/app.ts builds it), and shown with the
 * token-bucket model of throttling.test.ts: one caller's flood no longer starves the others.
 */
import { readFileSync } from 'node:fs';
import { Template } from 'aws-cdk-lib/assertions';
import { CachePolicy, OriginRequestPolicy } from 'aws-cdk-lib/aws-cloudfront';
import { AwsSolutionsChecks } from 'cdk-nag';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ADDRESS_RATE_LIMIT,
  ANONYMOUS_CALLER_RATE_LIMIT,
  CALLER_RATE_LIMIT,
  DEFAULT_API_BURST_LIMIT,
  DEFAULT_API_RATE_LIMIT,
  EDGE_RATE_WINDOW_SECONDS,
} from '#lib/deployment-settings.ts';
import {
  type EdgeFirewallStack,
  EVERY_REQUEST_PER_ADDRESS_RULE,
  PER_ADDRESS_RULE,
  PER_CALLER_RULE,
} from '#lib/edge-firewall-stack.ts';
import { serviceStacks } from '#lib/service-app.ts';
import { ServiceStack } from '#lib/service-stack.ts';
import { stageOf } from '#lib/stage.ts';
import { testApp } from '#test/support/cdk-app.ts';
import { type StageSettings, simulate } from './throttle-model.ts';

const BASE = 'bi.example.com';
const TENANT_CERTIFICATE = 'arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c';
const EDGE_CERTIFICATE = 'arn:aws:acm:us-east-1:123456789012:certificate/1a2b3c4d';
const production = {
  account: '123456789012',
  region: 'eu-west-1',
  alarmEmail: 'ops@example.com',
  tenantBaseDomain: BASE,
  tenantCertificateArn: TENANT_CERTIFICATE,
  edgeCertificateArn: EDGE_CERTIFICATE,
};

interface CfnResource<P = Record<string, unknown>> {
  Type: string;
  Properties: P;
}
interface RateBasedStatement {
  Limit: number;
  EvaluationWindowSec: number;
  AggregateKeyType: string;
  CustomKeys?: unknown[];
  ScopeDownStatement?: Record<string, unknown>;
}
interface WafRule {
  Name: string;
  Statement: { RateBasedStatement?: RateBasedStatement };
  Action: { Block?: { CustomResponse?: { ResponseCode: number; CustomResponseBodyKey: string; ResponseHeaders?: unknown[] } } };
  VisibilityConfig: { CloudWatchMetricsEnabled: boolean; MetricName: string; SampledRequestsEnabled: boolean };
}
type WebAcl = CfnResource<{
  Scope: string;
  DefaultAction: Record<string, unknown>;
  Rules: WafRule[];
  CustomResponseBodies: Record<string, { ContentType: string; Content: string }>;
  VisibilityConfig: { CloudWatchMetricsEnabled: boolean; MetricName: string };
}>;
type DistributionConfig = {
  Aliases: string[];
  ViewerCertificate: Record<string, unknown>;
  WebACLId: unknown;
  PriceClass: string;
  DefaultCacheBehavior: Record<string, unknown>;
  Origins: { DomainName: unknown; CustomOriginConfig: Record<string, unknown> }[];
};

/** The app of a stage, as bin/app.ts builds it (without bundling the functions). */
function synthesizeApp(settings: Record<string, unknown> = {}, context: Record<string, unknown> = {}) {
  const app = testApp({ stage: 'prod', stages: { prod: { ...production, ...settings } }, ...context });
  const stacks = serviceStacks(app, stageOf(app));
  return { stacks, service: Template.fromStack(stacks.service), edge: stacks.edge ? Template.fromStack(stacks.edge) : undefined };
}

function single<T>(items: readonly T[], what: string): T {
  if (items.length !== 1) throw new Error(`Expected exactly one ${what}, found ${items.length}`);
  return items[0] as T;
}

const webAclOf = (template: Template) =>
  single(Object.values(template.findResources('AWS::WAFv2::WebACL')) as WebAcl[], 'web ACL').Properties;
const ruleOf = (template: Template, name: string) =>
  single(
    webAclOf(template).Rules.filter((rule) => rule.Name === name),
    name,
  );
const distributionOf = (template: Template) =>
  single(
    Object.values(template.findResources('AWS::CloudFront::Distribution')) as CfnResource<{
      DistributionConfig: DistributionConfig;
    }>[],
    'distribution',
  ).Properties.DistributionConfig;
const problemOf = (settings: Record<string, unknown>): string => {
  try {
    synthesizeApp(settings);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the stage to be refused');
};

/** "Has an Authorization header": the scope of the per-caller rule, and negated, of the per-address one. */
const hasAuthorization = {
  SizeConstraintStatement: {
    FieldToMatch: { SingleHeader: { Name: 'authorization' } },
    ComparisonOperator: 'GT',
    Size: 0,
    TextTransformations: [{ Priority: 0, Type: 'NONE' }],
  },
};

describe('the edge: CloudFront and WAF in front of the API', () => {
  let app: ReturnType<typeof synthesizeApp>;
  let edge: Template;

  beforeAll(() => {
    app = synthesizeApp();
    edge = app.edge as Template;
  });

  describe('web ACL (the us-east-1 stack)', () => {
    it('is a CLOUDFRONT web ACL in us-east-1, in a stack of its own the service stack deploys after', () => {
      expect(app.stacks.edge?.region).toBe('us-east-1');
      expect(app.stacks.edge?.account).toBe(production.account);
      expect(app.stacks.edge?.stackName).toBe('BiTenantAdmin-prod-edge');
      expect(app.stacks.service.region).toBe('eu-west-1');
      expect(app.stacks.service.dependencies).toContain(app.stacks.edge);
      expect(webAclOf(edge)).toMatchObject({ Scope: 'CLOUDFRONT', DefaultAction: { Allow: {} } });
    });

    it(`gives each Authorization header value ${CALLER_RATE_LIMIT.fallback.toLocaleString('en-US')} requests a minute, then answers 429`, () => {
      const rule = ruleOf(edge, PER_CALLER_RULE);
      expect(rule.Statement.RateBasedStatement).toEqual({
        Limit: CALLER_RATE_LIMIT.fallback,
        EvaluationWindowSec: EDGE_RATE_WINDOW_SECONDS,
        AggregateKeyType: 'CUSTOM_KEYS',
        CustomKeys: [{ Header: { Name: 'authorization', TextTransformations: [{ Priority: 0, Type: 'NONE' }] } }],
        ScopeDownStatement: hasAuthorization,
      });
      expect(rule.Action.Block?.CustomResponse).toMatchObject({ ResponseCode: 429 });
    });

    it(`gives each address without Authorization ${ANONYMOUS_CALLER_RATE_LIMIT.fallback.toLocaleString('en-US')} requests a minute, then answers 429`, () => {
      const rule = ruleOf(edge, PER_ADDRESS_RULE);
      expect(rule.Statement.RateBasedStatement).toEqual({
        Limit: ANONYMOUS_CALLER_RATE_LIMIT.fallback,
        EvaluationWindowSec: EDGE_RATE_WINDOW_SECONDS,
        AggregateKeyType: 'IP',
        ScopeDownStatement: { NotStatement: { Statement: hasAuthorization } },
      });
      expect(rule.Action.Block?.CustomResponse).toMatchObject({ ResponseCode: 429 });
    });

    it(`gives each address ${ADDRESS_RATE_LIMIT.fallback.toLocaleString('en-US')} requests a minute whatever its tokens, so made-up tokens are no way around the first rule`, () => {
      const rule = ruleOf(edge, EVERY_REQUEST_PER_ADDRESS_RULE);
      expect(rule.Statement.RateBasedStatement).toEqual({
        Limit: ADDRESS_RATE_LIMIT.fallback,
        EvaluationWindowSec: EDGE_RATE_WINDOW_SECONDS,
        AggregateKeyType: 'IP',
      });
      expect(rule.Action.Block?.CustomResponse).toMatchObject({ ResponseCode: 429 });
    });

    it('answers 429 in the service’s error envelope, as JSON, with Retry-After, naming the limit passed', () => {
      const acl = webAclOf(edge);
      const limits = {
        [PER_CALLER_RULE]: '6,000',
        [PER_ADDRESS_RULE]: '3,000',
        [EVERY_REQUEST_PER_ADDRESS_RULE]: '30,000',
      };
      for (const [name, limit] of Object.entries(limits)) {
        const response = ruleOf(edge, name).Action.Block?.CustomResponse;
        expect(response?.ResponseHeaders, name).toEqual([{ Name: 'retry-after', Value: String(EDGE_RATE_WINDOW_SECONDS) }]);
        const body = acl.CustomResponseBodies[response?.CustomResponseBodyKey ?? ''];
        expect(body?.ContentType, name).toBe('APPLICATION_JSON');
        expect(JSON.parse(body?.Content ?? '')).toEqual({
          status: 'error',
          success: false,
          message: expect.stringContaining(`Too many requests: more than ${limit} in 60 seconds`),
          code: 'too_many_requests',
          errors: [],
          errorCount: 0,
          requestId: '',
        });
      }
    });

    it('counts every rule and the web ACL in CloudWatch, with sampled requests', () => {
      const acl = webAclOf(edge);
      expect(acl.VisibilityConfig).toMatchObject({ CloudWatchMetricsEnabled: true, SampledRequestsEnabled: true });
      for (const rule of acl.Rules)
        expect(rule.VisibilityConfig, rule.Name).toEqual({
          CloudWatchMetricsEnabled: true,
          MetricName: rule.Name,
          SampledRequestsEnabled: true,
        });
    });

    it('takes the limits from context (callerRateLimit, anonymousCallerRateLimit, addressRateLimit), within what WAF takes', () => {
      const custom = synthesizeApp({ callerRateLimit: 1200, addressRateLimit: 9000 }, { anonymousCallerRateLimit: '600' })
        .edge as Template;
      expect(ruleOf(custom, PER_CALLER_RULE).Statement.RateBasedStatement?.Limit).toBe(1200);
      expect(ruleOf(custom, PER_ADDRESS_RULE).Statement.RateBasedStatement?.Limit).toBe(600);
      expect(ruleOf(custom, EVERY_REQUEST_PER_ADDRESS_RULE).Statement.RateBasedStatement?.Limit).toBe(9000);
      expect(webAclOf(custom).CustomResponseBodies[PER_CALLER_RULE]?.Content).toContain('more than 1,200 in 60 seconds');
      expect(() => synthesizeApp({ callerRateLimit: 5 })).toThrow(/Context callerRateLimit must be a whole number from 10/);
      expect(() => synthesizeApp({ anonymousCallerRateLimit: 'lots' })).toThrow(/anonymousCallerRateLimit/);
    });

    it('alarms on callers the per-caller rule blocked, to an alarm topic of its own in us-east-1, subscribed like the service’s', () => {
      const topicId = single(Object.keys(edge.findResources('AWS::SNS::Topic')), 'edge alarm topic');
      const alarm = single(Object.entries(edge.findResources('AWS::CloudWatch::Alarm')) as [string, CfnResource][], 'edge alarm');
      expect(alarm[0]).toMatch(/^CallerBlockedAlarm[0-9A-F]{8}$/);
      expect(alarm[1].Properties).toMatchObject({
        Namespace: 'AWS/WAFV2',
        MetricName: 'BlockedRequests',
        Dimensions: expect.arrayContaining([
          { Name: 'Rule', Value: PER_CALLER_RULE },
          { Name: 'WebACL', Value: webAclOf(edge).VisibilityConfig.MetricName },
        ]),
        Statistic: 'Sum',
        Period: 300,
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        TreatMissingData: 'notBreaching',
        AlarmActions: [{ Ref: topicId }],
        OKActions: [{ Ref: topicId }],
        AlarmDescription: expect.stringMatching(/docs\/operations\.md/),
      });
      edge.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: production.alarmEmail });
    });
  });

  describe('distribution (the service stack)', () => {
    it('answers on every tenant domain with the us-east-1 certificate, TLS 1.2 or later, HTTPS only', () => {
      const config = distributionOf(app.service);
      expect(config.Aliases).toEqual([`*.${BASE}`]);
      expect(config.ViewerCertificate).toEqual({
        AcmCertificateArn: EDGE_CERTIFICATE,
        MinimumProtocolVersion: 'TLSv1.2_2021',
        SslSupportMethod: 'sni-only',
      });
      expect(config.DefaultCacheBehavior).toMatchObject({ ViewerProtocolPolicy: 'https-only' });
      expect(config.PriceClass).toBe('PriceClass_100');
    });

    it('attaches the web ACL of the us-east-1 stack, by a cross-region reference', () => {
      // The service stack reads the ARN the edge stack writes (CDK's ExportReader and ExportWriter).
      const reference = (config: DistributionConfig) => (config.WebACLId as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'];
      const [readerId, exportName] = reference(distributionOf(app.service));
      expect(Object.keys(app.service.findResources('Custom::CrossRegionExportReader'))).toEqual([readerId]);
      const writer = single(
        Object.values(edge.findResources('Custom::CrossRegionExportWriter')) as CfnResource<{
          WriterProps: { region: string; exports: Record<string, unknown> };
        }>[],
        'export writer',
      );
      const aclId = single(Object.keys(edge.findResources('AWS::WAFv2::WebACL')), 'web ACL');
      expect(writer.Properties.WriterProps).toEqual({
        region: 'eu-west-1',
        exports: { [exportName]: { 'Fn::GetAtt': [aclId, 'Arn'] } },
      });
    });

    it('caches nothing, allows every method, and forwards everything the viewer sent, Host included, to the regional tenant domain', () => {
      const config = distributionOf(app.service);
      expect(config.DefaultCacheBehavior).toMatchObject({
        CachePolicyId: CachePolicy.CACHING_DISABLED.cachePolicyId,
        // AllViewer: CloudFront then sends the viewer's Host as SNI and Host, which the API's wildcard domain
        // answers and the SSO landing checks; a policy without Host would reach API Gateway under its own name.
        OriginRequestPolicyId: OriginRequestPolicy.ALL_VIEWER.originRequestPolicyId,
        AllowedMethods: expect.arrayContaining(['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE']),
      });
      const domainsId = single(Object.keys(app.service.findResources('AWS::ApiGatewayV2::DomainName')), 'tenant domains');
      expect(single(config.Origins, 'origin')).toEqual({
        Id: expect.any(String),
        DomainName: { 'Fn::GetAtt': [domainsId, 'RegionalDomainName'] },
        CustomOriginConfig: expect.objectContaining({ OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] }),
      });
      app.service.hasResourceProperties('AWS::ApiGatewayV2::DomainName', { DomainName: `*.${BASE}` });
    });

    it('takes the price class from context', () => {
      expect(distributionOf(synthesizeApp({ edgePriceClass: 'All' }).service).PriceClass).toBe('PriceClass_All');
      expect(distributionOf(synthesizeApp({}, { edgePriceClass: '200' }).service).PriceClass).toBe('PriceClass_200');
      expect(() => synthesizeApp({ edgePriceClass: 'cheap' })).toThrow(/edgePriceClass must be one of 100, 200, All/);
    });

    it('turns the execute-api address off with the edge, so nobody goes around the WAF by it; on without', () => {
      app.service.hasResourceProperties('AWS::ApiGatewayV2::Api', { DisableExecuteApiEndpoint: true });
      const withoutEdge = synthesizeApp({ edge: false });
      expect(withoutEdge.edge).toBeUndefined();
      withoutEdge.service.hasResourceProperties('AWS::ApiGatewayV2::Api', { DisableExecuteApiEndpoint: false });
      withoutEdge.service.resourceCountIs('AWS::CloudFront::Distribution', 0);
    });

    it('tells integrators the edge’s URL, and where the wildcard DNS record points: the distribution', () => {
      const distributionId = single(Object.keys(app.service.findResources('AWS::CloudFront::Distribution')), 'distribution');
      app.service.hasOutput('ApiUrl', { Value: `https://api.${BASE}` });
      app.service.hasOutput('TenantDomainTarget', { Value: { 'Fn::GetAtt': [distributionId, 'DomainName'] } });
      app.service.hasOutput('EdgeDistributionId', { Value: { Ref: distributionId } });
      const withoutEdge = synthesizeApp({ edge: false }).service;
      const apiId = single(Object.keys(withoutEdge.findResources('AWS::ApiGatewayV2::Api')), 'API');
      const domainsId = single(Object.keys(withoutEdge.findResources('AWS::ApiGatewayV2::DomainName')), 'tenant domains');
      expect(JSON.stringify(withoutEdge.toJSON().Outputs.ApiUrl.Value)).toContain(apiId);
      withoutEdge.hasOutput('TenantDomainTarget', { Value: { 'Fn::GetAtt': [domainsId, 'RegionalDomainName'] } });
    });

    it('passes cdk-nag’s AwsSolutions rules, both stacks, with reasons for what it acknowledges', () => {
      for (const stack of [app.stacks.edge, app.stacks.service]) {
        const violations = new AwsSolutionsChecks().validateScope(stack as ServiceStack | EdgeFirewallStack).violations as {
          ruleName: string;
        }[];
        expect(
          violations.map((violation) => violation.ruleName),
          stack?.stackName,
        ).toEqual([]);
      }
    });
  });

  describe('stages', () => {
    it('is on for a production stage, off for an ephemeral one (the committed dev stage synthesizes without certificates)', () => {
      const { context } = JSON.parse(readFileSync('cdk.json', 'utf8')) as { context: Record<string, unknown> };
      const dev = testApp(context);
      const stage = stageOf(dev, { account: '111111111111', region: 'us-west-2' });
      expect(stage).toMatchObject({ ephemeral: true, edge: false });
      const stacks = serviceStacks(dev, stage);
      expect(stacks.edge).toBeUndefined();
      expect(dev.node.children.filter((child) => child instanceof ServiceStack)).toHaveLength(1);
      expect(stageOf(testApp({ stage: 'prod', stages: { prod: production } }))).toMatchObject({ edge: true });
    });

    it('refuses a production stage with the edge on and no edgeCertificateArn, saying how to go without', () => {
      const settings = { edgeCertificateArn: undefined };
      const message = problemOf(settings);
      expect(message).toContain('with the edge on (the default)');
      expect(message).toContain('missing: edgeCertificateArn.');
      expect(message).toContain('"edge": false');
      expect(synthesizeApp({ ...settings, edge: false }).edge).toBeUndefined();
    });

    it('refuses an edge certificate of a region other than us-east-1, or of another account', () => {
      expect(problemOf({ edgeCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc' })).toMatch(
        /Context edgeCertificateArn is a certificate of eu-west-1, but CloudFront takes certificates of us-east-1 only/,
      );
      expect(problemOf({ edgeCertificateArn: 'arn:aws:acm:us-east-1:210987654321:certificate/abc' })).toMatch(
        /edgeCertificateArn belongs to account 210987654321/,
      );
      expect(problemOf({ edgeCertificateArn: 'not-an-arn' })).toMatch(/edgeCertificateArn must be an ACM certificate ARN/);
      // The stack checks too, for a stack built without bin/app.ts.
      expect(
        () =>
          new ServiceStack(testApp(), 'Direct', {
            stage: 'test',
            tenantBaseDomain: BASE,
            tenantCertificateArn: TENANT_CERTIFICATE,
            edge: { certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc', webAclArn: 'arn:aws:wafv2:acl' },
            env: { account: production.account, region: production.region },
          }),
      ).toThrow(/certificate of eu-west-1, but CloudFront takes certificates of us-east-1 only/);
    });

    it('lets an ephemeral stage turn the edge on, given both certificates and a known account and region', () => {
      const ephemeral = { ephemeral: true, tenantBaseDomain: BASE, edge: true };
      const problem = (settings: Record<string, unknown>, defaults = {}) => {
        try {
          stageOf(testApp({ stage: 'dev', stages: { dev: settings } }), defaults);
        } catch (error) {
          return (error as Error).message;
        }
        return '';
      };
      expect(problem(ephemeral)).toContain('missing: tenantCertificateArn, edgeCertificateArn.');
      expect(problem(ephemeral)).not.toContain('"ephemeral": true');
      expect(problem({ ...ephemeral, tenantCertificateArn: TENANT_CERTIFICATE, edgeCertificateArn: EDGE_CERTIFICATE })).toMatch(
        /needs its account and region/,
      );
      expect(
        problem(
          { ...ephemeral, tenantCertificateArn: TENANT_CERTIFICATE, edgeCertificateArn: EDGE_CERTIFICATE },
          { account: production.account, region: production.region },
        ),
      ).toBe('');
      expect(problem({ ...ephemeral, edge: 'maybe' })).toMatch(/edge must be true or false/);
    });
  });

  describe('model: one caller flooding at 5,000 requests a second', () => {
    // WAF detects a rate above the limit with a lag, "usually below 30 seconds" (AWS); the model takes 30.
    const detectionSeconds = 30;
    const flooder = { key: 'GET /tenant/users', perSecond: 5000, caller: 'flooding tenant' };
    const others = ['GET /tenant/users', 'POST /agent/heartbeat', 'GET /tenants', 'POST /tenant/templates/reload'].map(
      (key, index) => ({
        key,
        perSecond: 25,
        caller: `caller ${index + 1}`,
      }),
    );
    let stage: StageSettings;
    let firewall: { limit: number; windowSeconds: number; delaySeconds: number };

    beforeAll(() => {
      const stages = Object.values(app.service.findResources('AWS::ApiGatewayV2::Stage')) as CfnResource<StageSettings>[];
      stage = single(stages, 'stage').Properties;
      expect(stage.DefaultRouteSettings).toEqual({
        ThrottlingRateLimit: DEFAULT_API_RATE_LIMIT,
        ThrottlingBurstLimit: DEFAULT_API_BURST_LIMIT,
      });
      const rule = ruleOf(edge, PER_CALLER_RULE).Statement.RateBasedStatement as RateBasedStatement;
      firewall = { limit: rule.Limit, windowSeconds: rule.EvaluationWindowSec, delaySeconds: detectionSeconds };
    });

    const total = (counts: Map<string, number>, callers: { caller: string }[]) =>
      callers.reduce((sum, { caller }) => sum + (counts.get(caller) ?? 0), 0);

    it('no longer empties the stage’s shared bucket once the WAF has blocked it: the others’ 100 a second are all served', () => {
      const seconds = 300;
      // From the second after the block takes effect (and the bucket has refilled) to the end: every request served.
      const afterBlock = simulate(stage, [flooder, ...others], { seconds, firewall, countFrom: detectionSeconds + 3 });
      expect(total(afterBlock.passed, others)).toBe(total(afterBlock.sent, others));
      expect(afterBlock.passed.get(flooder.caller)).toBe(0);
      // Over the whole five minutes, the others lose only what the flood took before the WAF acted.
      const whole = simulate(stage, [flooder, ...others], { seconds, firewall });
      expect(total(whole.passed, others) / total(whole.sent, others)).toBeGreaterThan(0.88);
    });

    it('without the edge, starves them for as long as it lasts', () => {
      const { passed, sent } = simulate(stage, [flooder, ...others], { seconds: 300 });
      expect(total(passed, others) / total(sent, others)).toBeLessThan(0.1);
    });

    it('leaves callers within the limit alone: 25 a second each is 1,500 a minute, under 6,000', () => {
      const { passed, sent } = simulate(stage, others, { seconds: 120, firewall });
      expect(total(passed, others)).toBe(total(sent, others));
    });
  });
});

describe('docs/operations.md on the edge', () => {
  // Lines wrap anywhere: the guide read as one line.
  const guide = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8').replace(/\s+/g, ' ');
  const { service, edge, stacks } = synthesizeApp();

  it('lists the edge’s settings, outputs and alarm', () => {
    for (const setting of [
      'edge',
      'edgeCertificateArn',
      'callerRateLimit',
      'anonymousCallerRateLimit',
      'addressRateLimit',
      'edgePriceClass',
    ])
      expect(guide, setting).toContain(`| \`${setting}\``);
    const outputs = [service, edge].flatMap((template) => Object.keys((template?.toJSON() as { Outputs: object }).Outputs));
    for (const output of outputs) expect(guide, output).toContain(`\`${output}\``);
    expect(guide).toContain('`CallerBlockedAlarm`');
  });

  it('states how many resources the edge stack has and adds to the service stack', () => {
    const count = (template: Template | undefined) => Object.keys((template?.toJSON() as { Resources: object }).Resources).length;
    const plain = synthesizeApp({ edge: false }).service;
    expect(guide).toContain(`the edge stack has ${count(edge)}`);
    expect(guide).toContain(`adds ${count(service) - count(plain)} to the service's`);
    expect(stacks.edge?.stackName).toBe('BiTenantAdmin-prod-edge');
  });
});
