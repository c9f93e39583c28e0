import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';
import { errorBody } from '#functions/core/errors.ts';
import { AlarmTopic } from './alarm-topic.ts';
import { EDGE_RATE_WINDOW_SECONDS, type EdgeSettings } from './deployment-settings.ts';
import { RUNBOOK } from './monitoring.ts';
import { EDGE_REGION } from './stage.ts';

export interface EdgeFirewallStackProps extends StackProps {
  stage: string;
  /** The stage's account: a web ACL for CloudFront lives in us-east-1, always. */
  env: { account?: string };
  limits: Pick<EdgeSettings, 'callerRateLimit' | 'anonymousCallerRateLimit'>;
  /** Subscribed to this stack's own alarm topic (an alarm can only notify a topic of its own region). */
  alarmEmail?: string;
}

/** The rules' names, which are also their CloudWatch metrics' `Rule` dimension. */
export const PER_CALLER_RULE = 'PerCaller';
export const PER_ADDRESS_RULE = 'PerAddressWithoutAuthorization';
/** The key of the 429 body in the web ACL's custom response bodies. */
const TOO_MANY_REQUESTS_BODY = 'too-many-requests';
/**
 * The `code` of the edge's 429 answers. Not (yet) one of functions/core/error-codes.ts: no function
 * answers it, the WAF does, before any function runs.
 */
export const EDGE_THROTTLED_CODE = 'too_many_requests';
/** What a client blocked by a rate-based rule is told to wait: the rule looks back over this window. */
export const EDGE_RETRY_AFTER_SECONDS = EDGE_RATE_WINDOW_SECONDS;

/**
 * The 429 the WAF answers, in the service's error envelope (functions/core/errors.ts) so a client
 * reads it like every other error. It is static (WAF fills in nothing), so its `requestId` is empty:
 * the request never reached the service; CloudFront's `x-amz-cf-id` header names it instead.
 */
export function edgeThrottledBody(limit: number): string {
  const message =
    `Too many requests: more than ${limit.toLocaleString('en-US')} in ${EDGE_RATE_WINDOW_SECONDS} seconds from this caller. ` +
    `Slow down and retry after ${EDGE_RETRY_AFTER_SECONDS} seconds.`;
  return JSON.stringify({ ...errorBody('internal_error', message, ''), code: EDGE_THROTTLED_CODE });
}

/**
 * The WAF web ACL in front of the API's CloudFront distribution (lib/service-edge.ts). A web ACL of
 * CLOUDFRONT scope can only be made in us-east-1, hence a stack of its own there, deployed before the
 * service's stack, which takes the ACL's ARN by a cross-region reference (`cdk deploy --all`).
 *
 * Its rate-based rules give each caller a limit of its own, which API Gateway cannot: an HTTP API has no
 * usage plans, and its stage's bucket is shared, so one caller could otherwise spend it for everybody
 * (docs/operations.md, API throttling). Everything else is allowed: no managed rule groups, whose body
 * rules would refuse legitimate bodies (the API takes up to 1 MiB; AWS's core rule set blocks bodies
 * over 8 KB).
 */
export class EdgeFirewallStack extends Stack {
  readonly webAcl: CfnWebACL;
  /** The web ACL's CloudWatch metric name (the `WebACL` dimension of its metrics). */
  readonly webAclMetricName: string;

  constructor(scope: Construct, id: string, props: EdgeFirewallStackProps) {
    super(scope, id, { ...props, env: { account: props.env.account, region: EDGE_REGION } });
    this.webAclMetricName = `${this.stackName}-web-acl`;
    const visibility = (metricName: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName,
      // The console then shows samples of what each rule matched: who was blocked, from where.
      sampledRequestsEnabled: true,
    });
    const hasAuthorization: CfnWebACL.StatementProperty = {
      sizeConstraintStatement: {
        fieldToMatch: { singleHeader: { Name: 'authorization' } },
        comparisonOperator: 'GT',
        size: 0,
        textTransformations: [{ priority: 0, type: 'NONE' }],
      },
    };
    const tooManyRequests: CfnWebACL.RuleActionProperty = {
      block: {
        customResponse: {
          responseCode: 429,
          customResponseBodyKey: TOO_MANY_REQUESTS_BODY,
          responseHeaders: [{ name: 'retry-after', value: String(EDGE_RETRY_AFTER_SECONDS) }],
        },
      },
    };

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: this.webAclMetricName,
      // CloudFormation takes letters, digits, spaces and =:#@/-,. only here.
      description: `Per-caller rate limits in front of the API of stage ${props.stage} - docs/operations.md, API throttling`,
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(this.webAclMetricName),
      customResponseBodies: {
        [TOO_MANY_REQUESTS_BODY]: { contentType: 'APPLICATION_JSON', content: edgeThrottledBody(props.limits.callerRateLimit) },
      },
      rules: [
        {
          // Each token is a caller: a client, a tenant backend, an agent. Keyed on the header's value
          // as sent, so two tokens are two callers even from one address (an integrator's NAT).
          name: PER_CALLER_RULE,
          priority: 0,
          statement: {
            rateBasedStatement: {
              limit: props.limits.callerRateLimit,
              evaluationWindowSec: EDGE_RATE_WINDOW_SECONDS,
              aggregateKeyType: 'CUSTOM_KEYS',
              customKeys: [{ header: { name: 'authorization', textTransformations: [{ priority: 0, type: 'NONE' }] } }],
              scopeDownStatement: hasAuthorization,
            },
          },
          action: tooManyRequests,
          visibilityConfig: visibility(PER_CALLER_RULE),
        },
        {
          // The routes that take no token (the SSO landing, docs, JWKS, health, unmatched paths): each
          // address is a caller. CloudFront gives WAF the viewer's own address.
          name: PER_ADDRESS_RULE,
          priority: 1,
          statement: {
            rateBasedStatement: {
              limit: props.limits.anonymousCallerRateLimit,
              evaluationWindowSec: EDGE_RATE_WINDOW_SECONDS,
              aggregateKeyType: 'IP',
              scopeDownStatement: { notStatement: { statement: hasAuthorization } },
            },
          },
          action: tooManyRequests,
          visibilityConfig: visibility(PER_ADDRESS_RULE),
        },
      ],
    });

    // A caller blocked at the edge is news (a runaway client, a leaked token); CloudWatch alarms notify
    // topics of their own region only, so this stack has its own topic, subscribed like the service's.
    const alarmTopic = new AlarmTopic(this, 'Alarms', { email: props.alarmEmail });
    const blocked = new Metric({
      namespace: 'AWS/WAFV2',
      metricName: 'BlockedRequests',
      // A CloudFront web ACL's metrics have no Region dimension.
      dimensionsMap: { WebACL: this.webAclMetricName, Rule: PER_CALLER_RULE },
      statistic: 'Sum',
      period: Duration.minutes(5),
    });
    const alarm = new Alarm(this, 'CallerBlockedAlarm', {
      alarmDescription:
        `The WAF answered 429 to a caller that sent more than ${props.limits.callerRateLimit.toLocaleString('en-US')} requests ` +
        `in ${EDGE_RATE_WINDOW_SECONDS} seconds with one Authorization header (callerRateLimit): a runaway client or agent, ` +
        `or a leaked token. The web ACL's sampled requests name it. ${RUNBOOK}`,
      metric: blocked,
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    alarm.addAlarmAction(alarmTopic.action);
    alarm.addOkAction(alarmTopic.action);

    new CfnOutput(this, 'WebAclArn', { value: this.webAcl.attrArn });
    new CfnOutput(this, 'EdgeAlarmTopicArn', { value: alarmTopic.topic.topicArn });
  }
}
