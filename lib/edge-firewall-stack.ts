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
  limits: Pick<EdgeSettings, 'callerRateLimit' | 'anonymousCallerRateLimit' | 'addressRateLimit'>;
  /** Subscribed to this stack's own alarm topic (an alarm can only notify a topic of its own region). */
  alarmEmail?: string;
}

/** The rules' names, which are also their CloudWatch metrics' `Rule` dimension. */
export const PER_CALLER_RULE = 'PerCaller';
export const PER_ADDRESS_RULE = 'PerAddressWithoutAuthorization';
export const EVERY_REQUEST_PER_ADDRESS_RULE = 'PerAddress';
/** What a client blocked by a rate-based rule is told to wait: the rule looks back over this window. */
export const EDGE_RETRY_AFTER_SECONDS = EDGE_RATE_WINDOW_SECONDS;

/**
 * The 429 the WAF answers, in the service's error envelope (functions/core/errors.ts) so a client
 * reads it like every other error. It is static (WAF fills in nothing), so its `requestId` is empty:
 * the request never reached the service; CloudFront's `x-amz-cf-id` header names it instead.
 */
export function edgeThrottledBody(limit: number, caller: string): string {
  const message =
    `Too many requests: more than ${limit.toLocaleString('en-US')} in ${EDGE_RATE_WINDOW_SECONDS} seconds from ${caller}. ` +
    `Slow down and retry after ${EDGE_RETRY_AFTER_SECONDS} seconds.`;
  return JSON.stringify(errorBody('too_many_requests', message, ''));
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
    // Each rule answers with its own body (its key is the rule's name), which names the limit passed.
    const tooManyRequests = (rule: string): CfnWebACL.RuleActionProperty => ({
      block: {
        customResponse: {
          responseCode: 429,
          customResponseBodyKey: rule,
          responseHeaders: [{ name: 'retry-after', value: String(EDGE_RETRY_AFTER_SECONDS) }],
        },
      },
    });
    const body = (limit: number, caller: string): CfnWebACL.CustomResponseBodyProperty => ({
      contentType: 'APPLICATION_JSON',
      content: edgeThrottledBody(limit, caller),
    });

    this.webAcl = new CfnWebACL(this, 'WebAcl', {
      name: this.webAclMetricName,
      // CloudFormation takes letters, digits, spaces and =:#@/-,. only here.
      description: `Per-caller rate limits in front of the API of stage ${props.stage} - docs/operations.md, API throttling`,
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(this.webAclMetricName),
      customResponseBodies: {
        [PER_CALLER_RULE]: body(props.limits.callerRateLimit, 'this Authorization header'),
        [PER_ADDRESS_RULE]: body(props.limits.anonymousCallerRateLimit, 'this address without Authorization'),
        [EVERY_REQUEST_PER_ADDRESS_RULE]: body(props.limits.addressRateLimit, 'this address'),
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
          action: tooManyRequests(PER_CALLER_RULE),
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
          action: tooManyRequests(PER_ADDRESS_RULE),
          visibilityConfig: visibility(PER_ADDRESS_RULE),
        },
        {
          // Every request of an address, with or without a token: a caller that sends a new made-up
          // token each time is a new caller to the first rule (and gets 401s that still spend the
          // stage's shared bucket), but not a new address. Generous, for many callers behind one NAT.
          name: EVERY_REQUEST_PER_ADDRESS_RULE,
          priority: 2,
          statement: {
            rateBasedStatement: {
              limit: props.limits.addressRateLimit,
              evaluationWindowSec: EDGE_RATE_WINDOW_SECONDS,
              aggregateKeyType: 'IP',
            },
          },
          action: tooManyRequests(EVERY_REQUEST_PER_ADDRESS_RULE),
          visibilityConfig: visibility(EVERY_REQUEST_PER_ADDRESS_RULE),
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
