import { CfnOutput, CustomResource, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { Function as EdgeFunction, FunctionCode, FunctionRuntime, KeyValueStore } from 'aws-cdk-lib/aws-cloudfront';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';
import { serviceMetricsNamespace, serviceName, stageVariable } from '#functions/core/observability/names.ts';
import { anonymousPathsOf, viewerRequestCode } from '#functions/edge/viewer-request-code.ts';
import { routes } from '#functions/routes.ts';
import { type AlarmSeverity, AlarmTopics, notifying } from './alarm-topic.ts';
import { pageEmailSetting } from './deployment-settings.ts';
import { API_HOST_LABEL, EdgeDistributions, TENANT_DOMAIN_API_PATHS } from './edge-distributions.ts';
import { EdgeFirewall } from './edge-firewall.ts';
import { type EdgeSettings, edgeLimitProblems } from './edge-settings.ts';
import { RUNBOOK } from './monitoring.ts';
import { OriginSecret } from './origin-secret.ts';
import { functionWithOwnRole } from './project-function.ts';
import { EDGE_REGION } from './stage.ts';
import type { RouteBucket } from './throttling.ts';

export interface EdgeStackProps extends StackProps {
  stage: string;
  /** The stage's account: everything here lives in us-east-1, where CloudFront's web ACLs, logs and metrics are. */
  env: { account?: string };
  tenantBaseDomain: string;
  /** ACM certificate of `*.<tenantBaseDomain>` in us-east-1. */
  certificateArn: string;
  /** The API's regional custom domain name (`d-….execute-api.<region>.amazonaws.com`), from the service's stack. */
  apiOrigin: string;
  /** The token MAC keys' secret, in the service's region (its stack's TokenKeysSecretArn). */
  tokenKeysSecretArn: string;
  /** Whether the service still accepts tokens of the unsigned form (UNSIGNED_TOKENS): the edge lets them through alike. */
  acceptUnsignedTokens: boolean;
  settings: EdgeSettings;
  /** Every route's API Gateway bucket (lib/throttling.ts): no address may be able to empty one. */
  routeBuckets: Record<string, RouteBucket>;
  /** Subscribed to this stack's own alarm topics (an alarm can only notify a topic of its own region). */
  alarmEmail?: string;
}

/**
 * CloudFront's metrics of one distribution: in us-east-1, dimension Region `Global`
 * (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/programming-cloudwatch-metrics.html).
 */
const distributionMetric = (distributionId: string, metricName: string, statistic: string) =>
  new Metric({
    namespace: 'AWS/CloudFront',
    metricName,
    dimensionsMap: { DistributionId: distributionId, Region: 'Global' },
    statistic,
    period: Duration.minutes(1),
  });
/** An error rate (percent of requests) at or above which the edge alarms, over three of five minutes. */
export const EDGE_5XX_RATE_PERCENT = 2;
/** The origin's p90 latency (ms) at or above which the edge alarms: a third of a route's time-out. */
export const ORIGIN_LATENCY_P90_MS = 5000;

/**
 * Everything in front of the API, in us-east-1 (`BiTenantAdmin-<stage>-edge`), deployed after the
 * service's stack, whose API domain it takes as its origin (a cross-region reference):
 *
 * - the WAF web ACL (lib/edge-firewall.ts), its log and an alarm per rule;
 * - the viewer-request function that refuses forged and malformed bearer tokens before anything is
 *   spent on them (functions/edge/viewer-request.js), and the KeyValueStore of token keys it reads,
 *   filled at deploy from the service's secret;
 * - the origin secret CloudFront sends the API, rotated by its own function;
 * - the distributions (lib/edge-distributions.ts) with their 5xx and origin-latency alarms;
 * - a probe that calls the API through the edge every minute and alarms when it fails or falls silent.
 *
 * CloudFront's and WAF's metrics for CloudFront exist in us-east-1 only, and an alarm can only read its
 * own region's metrics: that is why the edge's alarms, and its topic, live here.
 */
export class EdgeStack extends Stack {
  readonly firewall: EdgeFirewall;
  readonly distributions: EdgeDistributions;
  readonly tokenKeys: KeyValueStore;
  readonly originSecret: OriginSecret;

  constructor(scope: Construct, id: string, props: EdgeStackProps) {
    super(scope, id, { ...props, env: { account: props.env.account, region: EDGE_REGION } });
    const { settings } = props;
    const problems = edgeLimitProblems(settings, props.routeBuckets);
    if (problems.length > 0)
      throw new Error(`The edge's per-address limits would let one address empty these routes' buckets:\n${problems.join('\n')}`);
    const apiHost = `${API_HOST_LABEL}.${props.tenantBaseDomain}`;
    // The probe pages (callers cannot reach the API); the rest tickets. The stage's pageEmail hears the page topic too.
    const alarmTopics = new AlarmTopics(this, { alarmEmail: props.alarmEmail, pageEmail: pageEmailSetting(this) });
    const alarm = (alarmId: string, severity: AlarmSeverity, alarmProps: ConstructorParameters<typeof Alarm>[2]) =>
      notifying(new Alarm(this, alarmId, alarmProps), alarmTopics.action(severity));
    const anonymousPaths = anonymousPathsOf(routes);

    this.firewall = new EdgeFirewall(this, {
      stage: props.stage,
      settings,
      anonymousPaths,
      alarmAction: alarmTopics.ticket.action,
      // With a front end on the tenant domains (ours in front of it, or its own distribution with this web
      // ACL attached), the rate rules count the API's requests only.
      apiRequests:
        settings.frontEnd === 'none'
          ? undefined
          : { host: apiHost, paths: TENANT_DOMAIN_API_PATHS.map((pattern) => pattern.replace(/\*$/, '')) },
    });

    // The token keys the viewer function checks signatures with: copied from the service's secret at
    // deploy by a custom resource, and by `npm run admin -- token-keys rotate` after.
    this.tokenKeys = new KeyValueStore(this, 'TokenKeys', { comment: `Token MAC keys of stage ${props.stage} (k<id>)` });
    const sync = functionWithOwnRole(this, 'TokenKeysSync', {
      entry: 'functions/edge/token-keys-sync.ts',
      description: 'Custom resource: copies the token keys into the viewer function KeyValueStore',
      environment: { TOKEN_KEYS_SECRET_ARN: props.tokenKeysSecretArn },
      timeoutSeconds: 60,
      statements: [
        new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [props.tokenKeysSecretArn] }),
        new PolicyStatement({
          actions: [
            'cloudfront-keyvaluestore:DescribeKeyValueStore',
            'cloudfront-keyvaluestore:ListKeys',
            'cloudfront-keyvaluestore:UpdateKeys',
          ],
          resources: [this.tokenKeys.keyValueStoreArn],
        }),
      ],
    });
    new CustomResource(this, 'TokenKeysInStore', {
      serviceToken: sync.functionArn,
      resourceType: 'Custom::TokenKeysSync',
      properties: { KeyValueStoreArn: this.tokenKeys.keyValueStoreArn, SecretArn: props.tokenKeysSecretArn },
    });

    const viewerRequest = new EdgeFunction(this, 'ViewerRequest', {
      comment: 'Refuses forged or malformed bearer tokens before the WAF count and the origin',
      runtime: FunctionRuntime.JS_2_0,
      keyValueStore: this.tokenKeys,
      code: FunctionCode.fromInline(viewerRequestCode({ anonymousPaths, acceptUnsigned: props.acceptUnsignedTokens })),
    });

    this.originSecret = new OriginSecret(this, props.stage);
    this.distributions = new EdgeDistributions(this, {
      tenantBaseDomain: props.tenantBaseDomain,
      apiOrigin: props.apiOrigin,
      certificateArn: props.certificateArn,
      webAclArn: this.firewall.webAcl.attrArn,
      priceClass: settings.priceClass,
      frontEnd: settings.frontEnd,
      originSecret: this.originSecret.secret,
      viewerRequest,
    });
    const ours = this.distributions.all().map(([, distribution]) => distribution);
    const frontEndDistribution =
      settings.frontEnd !== 'none' && 'distributionId' in settings.frontEnd ? settings.frontEnd.distributionId : undefined;
    const rotatedIds = [
      ...ours.map((distribution) => distribution.distributionId),
      ...(frontEndDistribution ? [frontEndDistribution] : []),
    ];
    this.originSecret.rotateOn(
      {
        ids: rotatedIds,
        webAclArn: this.firewall.webAcl.attrArn,
        arns: rotatedIds.map((distributionId) =>
          this.formatArn({ service: 'cloudfront', region: '', resource: 'distribution', resourceName: distributionId }),
        ),
      },
      settings.originSecretRotationDays,
    );

    for (const [distributionId, distribution] of this.distributions.all()) {
      // Tickets: the service's error budget pages on the API's own 5xx, and the probe when the edge fails as a whole.
      alarm(`${distributionId}5xxAlarm`, 'ticket', {
        alarmDescription:
          `${EDGE_5XX_RATE_PERCENT}% or more of the requests to ${distributionId} answered 5xx in 3 of 5 minutes, counting CloudFront's own ` +
          `(502 and 504: origin unreachable, TLS refused, timed out) as well as the API's. ${RUNBOOK}`,
        metric: distributionMetric(distribution.distributionId, '5xxErrorRate', 'Average'),
        threshold: EDGE_5XX_RATE_PERCENT,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
        // No requests, no errors: silence is the probe's alarm.
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      alarm(`${distributionId}OriginLatencyAlarm`, 'ticket', {
        alarmDescription: `The origin's p90 latency behind ${distributionId} was ${ORIGIN_LATENCY_P90_MS} ms or more in 3 of 5 minutes (a route times out after 15 s). ${RUNBOOK}`,
        metric: distributionMetric(distribution.distributionId, 'OriginLatency', 'p90'),
        threshold: ORIGIN_LATENCY_P90_MS,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    }

    // The probe: through the edge as a caller, every minute, from us-east-1 (outside the service's region).
    const probe = functionWithOwnRole(this, 'EdgeProbe', {
      entry: 'functions/edge/edge-probe.ts',
      description: `Every minute: GET /health and a token request through https://${apiHost}`,
      environment: {
        EDGE_PROBE_URL: `https://${apiHost}`,
        TOKEN_KEYS_SECRET_ARN: props.tokenKeysSecretArn,
        [stageVariable]: props.stage,
      },
      timeoutSeconds: 30,
      // It signs its token with the current token key, as the service does.
      statements: [new PolicyStatement({ actions: ['secretsmanager:GetSecretValue'], resources: [props.tokenKeysSecretArn] })],
    });
    new Rule(this, 'EdgeProbeRule', {
      description: `Runs the edge probe of stage ${props.stage} every minute`,
      schedule: Schedule.cron({ minute: '*' }),
      // A probe that could not run is worth nothing late: the next one comes in a minute.
      targets: [new LambdaFunction(probe, { retryAttempts: 0, maxEventAge: Duration.minutes(1) })],
    });
    alarm('EdgeProbeAlarm', 'page', {
      alarmDescription:
        `The probe could not reach the API through the edge (https://${apiHost}) as a caller would, in 2 of 3 minutes, or it did not run: ` +
        `DNS, the certificate, CloudFront, the WAF, the viewer function's keys, the origin secret or the API. Its log says which check failed. ${RUNBOOK}`,
      metric: new Metric({
        namespace: serviceMetricsNamespace,
        metricName: 'EdgeProbeSuccess',
        dimensionsMap: { service: serviceName, stage: props.stage },
        statistic: 'Minimum',
        period: Duration.minutes(1),
      }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      // A probe that stopped running is an edge nobody watches.
      treatMissingData: TreatMissingData.BREACHING,
    });

    new CfnOutput(this, 'WebAclArn', { value: this.firewall.webAcl.attrArn });
    new CfnOutput(this, 'EdgePageTopicArn', { value: alarmTopics.page.topic.topicArn });
    new CfnOutput(this, 'EdgeTicketTopicArn', { value: alarmTopics.ticket.topic.topicArn });
    new CfnOutput(this, 'WafLogGroupName', { value: this.firewall.logGroup.logGroupName });
    new CfnOutput(this, 'ApiDistributionId', { value: this.distributions.api.distributionId });
    // Where `api.<tenantBaseDomain>` points (a CNAME, or a Route 53 alias A record).
    new CfnOutput(this, 'ApiDomainTarget', { value: this.distributions.api.distributionDomainName });
    if (this.distributions.tenants) {
      new CfnOutput(this, 'TenantDistributionId', { value: this.distributions.tenants.distributionId });
      // Where the wildcard `*.<tenantBaseDomain>` points.
      new CfnOutput(this, 'TenantDomainTarget', { value: this.distributions.tenants.distributionDomainName });
    }
    new CfnOutput(this, 'OriginSecretArn', { value: this.originSecret.secret.secretArn });
    new CfnOutput(this, 'TokenKeysKeyValueStoreArn', { value: this.tokenKeys.keyValueStoreArn });
  }
}
