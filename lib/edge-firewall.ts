import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import type { IAlarmAction } from 'aws-cdk-lib/aws-cloudwatch';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CfnLoggingConfiguration, CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { errorBody } from '#functions/core/errors.ts';
import { EDGE_RATE_WINDOW_SECONDS, type EdgeSettings } from './edge-settings.ts';
import { notifying } from './alarm-topic.ts';
import { RUNBOOK } from './monitoring.ts';

/** The rate-based rules' names, which are also their CloudWatch metrics' `Rule` dimension. */
export const PER_CALLER_RULE = 'PerCaller';
export const ANONYMOUS_PATHS_RULE = 'PerAddressAnonymousPaths';
export const PER_ADDRESS_RULE = 'PerAddress';
/**
 * The managed rule groups, by the name of their rule in the web ACL (and their metric), with their capacity
 * units (https://docs.aws.amazon.com/waf/latest/developerguide/aws-managed-rule-groups-ip-rep.html,
 * https://docs.aws.amazon.com/waf/latest/developerguide/aws-managed-rule-groups-baseline.html).
 */
export const MANAGED_RULE_GROUPS = {
  IpReputation: { name: 'AWSManagedRulesAmazonIpReputationList', capacity: 25 },
  KnownBadInputs: { name: 'AWSManagedRulesKnownBadInputsRuleSet', capacity: 200 },
} as const;
/** What a client blocked by a rate-based rule is told to wait: the rule looks back over this window. */
export const EDGE_RETRY_AFTER_SECONDS = EDGE_RATE_WINDOW_SECONDS;
/**
 * The text transformations of the per-caller key, in order. The service accepts the scheme in any
 * letter case and one or more spaces before the token (functions/core/auth/principals.ts); these make
 * every such spelling of one token one key, so a caller cannot multiply its budget by respelling it
 * (what each does: https://docs.aws.amazon.com/waf/latest/APIReference/API_TextTransformation.html).
 */
export const CALLER_KEY_TRANSFORMATIONS = ['COMPRESS_WHITE_SPACE', 'LOWERCASE'] as const;
/**
 * Headers whose values neither the WAF log nor anything else WAF stores shows (data protection, which,
 * unlike the log's redaction, covers the rate rules' keys too): the token as a one-way hash, so that
 * one caller's requests still read as one; the session cookies replaced
 * (https://docs.aws.amazon.com/waf/latest/APIReference/API_DataProtection.html: ExcludeRateBasedDetails false).
 */
export const PROTECTED_HEADERS = { authorization: 'HASH', cookie: 'SUBSTITUTION' } as const;

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
 * A WAF statement: the request's URI path is one of `paths`, or starts with one ending in `/`
 * (functions/edge/viewer-request-code.ts `anonymousPathsOf`, which the viewer function reads alike).
 */
export function pathStatement(paths: readonly string[]): CfnWebACL.StatementProperty {
  const statements = paths.map((path): CfnWebACL.StatementProperty => ({
    byteMatchStatement: {
      fieldToMatch: { uriPath: {} },
      positionalConstraint: path.endsWith('/') ? 'STARTS_WITH' : 'EXACTLY',
      searchString: path,
      textTransformations: [{ priority: 0, type: 'NONE' }],
    },
  }));
  if (statements.length === 1) return statements[0] as CfnWebACL.StatementProperty;
  return { orStatement: { statements } };
}

export interface EdgeFirewallProps {
  stage: string;
  settings: Pick<
    EdgeSettings,
    'callerRateLimit' | 'anonymousCallerRateLimit' | 'addressRateLimit' | 'managedRules' | 'wafLogRetentionDays'
  >;
  /** The paths of the routes that take no token (`anonymousPathsOf`). */
  anonymousPaths: readonly string[];
  /**
   * With a BI front end on the tenant domains (frontEnd `origin` or `distributionId`): what of their
   * traffic is the API's, the API host and the paths ending in `/` this service owns on the tenant
   * domains. The rate rules then count only those requests: the front end's pages and assets are not
   * the API's to limit.
   */
  apiRequests?: { host: string; paths: readonly string[] };
  alarmAction: IAlarmAction;
}

/**
 * The WAF web ACL in front of the API's CloudFront distributions (lib/edge-stack.ts, in us-east-1:
 * a CLOUDFRONT web ACL lives there). Five rules, in order:
 *
 * - two AWS managed rule groups, the Amazon IP reputation list and known bad inputs, in count mode
 *   unless the stage sets `managedRules` to `block` (their body rules are the ones that can refuse a
 *   legitimate body; count mode shows what they would do first);
 * - `PerCaller`: each bearer token has a limit of its own, whatever spelling of it is sent;
 * - `PerAddressAnonymousPaths`: each address has a limit on the paths that take no token, whatever
 *   headers it adds (a made-up Authorization header is no way out of it);
 * - `PerAddress`: each address has a limit on everything, so a new made-up token per request is a new
 *   caller to `PerCaller` but not a new address.
 *
 * Each rate rule answers 429 in the service's envelope and has an alarm on its blocks. The web ACL logs
 * what it blocked or counted to `aws-waf-logs-<stack>`, with tokens hashed and without cookies or paths
 * (the SSO landing's path carries a login token), and keeps no sampled requests.
 */
export class EdgeFirewall {
  readonly webAcl: CfnWebACL;
  /** The web ACL's CloudWatch metric name (the `WebACL` dimension of its metrics). */
  readonly webAclMetricName: string;
  readonly logGroup: LogGroup;
  /** The alarms on each rule's blocks, by rule name. */
  readonly blockAlarms: Record<string, Alarm> = {};

  constructor(stack: Stack, props: EdgeFirewallProps) {
    const { settings } = props;
    this.webAclMetricName = `${stack.stackName}-web-acl`;
    const visibility = (metricName: string): CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      metricName,
      // No samples: they would show the landing's path, which carries a login token, and WAF redacts no
      // path in them. The WAF log (below) shows what the rules refused or counted, without secrets.
      sampledRequestsEnabled: false,
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
    const rateRule = (
      name: string,
      limit: number,
      key: Pick<CfnWebACL.RateBasedStatementProperty, 'aggregateKeyType' | 'customKeys'>,
      scopeDownStatement?: CfnWebACL.StatementProperty,
    ): Omit<CfnWebACL.RuleProperty, 'priority'> => ({
      name,
      statement: {
        rateBasedStatement: { limit, evaluationWindowSec: EDGE_RATE_WINDOW_SECONDS, ...key, scopeDownStatement },
      },
      action: tooManyRequests(name),
      visibilityConfig: visibility(name),
    });
    const managedRule = (name: string): Omit<CfnWebACL.RuleProperty, 'priority'> => ({
      name,
      statement: { managedRuleGroupStatement: { vendorName: 'AWS', name } },
      // Count: each rule of the group counts (and is logged) instead of blocking.
      overrideAction: settings.managedRules === 'block' ? { none: {} } : { count: {} },
      visibilityConfig: visibility(name),
    });

    // Everything, or with a front end behind the tenant distribution, what goes to the API.
    const apiRequests: CfnWebACL.StatementProperty | undefined = props.apiRequests && {
      orStatement: {
        statements: [
          {
            byteMatchStatement: {
              fieldToMatch: { singleHeader: { Name: 'host' } },
              positionalConstraint: 'EXACTLY',
              searchString: props.apiRequests.host,
              textTransformations: [{ priority: 0, type: 'LOWERCASE' }],
            },
          },
          pathStatement(props.apiRequests.paths),
        ],
      },
    };
    const and = (statement: CfnWebACL.StatementProperty): CfnWebACL.StatementProperty =>
      apiRequests ? { andStatement: { statements: [statement, apiRequests] } } : statement;

    const rules = [
      // Known-bad addresses and inputs first: a request they block is never counted against a caller.
      managedRule(MANAGED_RULE_GROUPS.IpReputation.name),
      managedRule(MANAGED_RULE_GROUPS.KnownBadInputs.name),
      rateRule(
        PER_CALLER_RULE,
        settings.callerRateLimit,
        {
          aggregateKeyType: 'CUSTOM_KEYS',
          customKeys: [
            {
              header: {
                name: 'authorization',
                textTransformations: CALLER_KEY_TRANSFORMATIONS.map((type, priority) => ({ priority, type })),
              },
            },
          ],
        },
        and(hasAuthorization),
      ),
      rateRule(
        ANONYMOUS_PATHS_RULE,
        settings.anonymousCallerRateLimit,
        { aggregateKeyType: 'IP' },
        and(pathStatement(props.anonymousPaths)),
      ),
      rateRule(PER_ADDRESS_RULE, settings.addressRateLimit, { aggregateKeyType: 'IP' }, apiRequests),
    ].map((rule, priority): CfnWebACL.RuleProperty => ({ ...rule, priority }));

    this.webAcl = new CfnWebACL(stack, 'WebAcl', {
      name: this.webAclMetricName,
      // CloudFormation takes letters, digits, spaces and =:#@/-,. only here.
      description: `Per-caller rate limits in front of the API of stage ${props.stage} - docs/operations.md, API throttling`,
      scope: 'CLOUDFRONT',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(this.webAclMetricName),
      dataProtectionConfig: {
        dataProtections: Object.entries(PROTECTED_HEADERS).map(([name, action]) => ({
          field: { fieldType: 'SINGLE_HEADER', fieldKeys: [name] },
          action,
        })),
      },
      customResponseBodies: {
        [PER_CALLER_RULE]: body(settings.callerRateLimit, 'this bearer token'),
        [ANONYMOUS_PATHS_RULE]: body(settings.anonymousCallerRateLimit, 'this address to the routes without a token'),
        [PER_ADDRESS_RULE]: body(settings.addressRateLimit, 'this address'),
      },
      rules,
    });

    // WAF delivers a CLOUDFRONT web ACL's log to a group of us-east-1 whose name starts so
    // (https://docs.aws.amazon.com/waf/latest/developerguide/logging-cw-logs.html).
    const logGroupName = `aws-waf-logs-${stack.stackName}`;
    this.logGroup = new LogGroup(stack, 'WafLogs', {
      logGroupName,
      retention: settings.wafLogRetentionDays as RetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    new CfnLoggingConfiguration(stack, 'WafLogging', {
      resourceArn: this.webAcl.attrArn,
      logDestinationConfigs: [this.logGroup.logGroupArn],
      // Nor the path: the SSO landing's carries a login token (the headers are the web ACL's data protection's).
      redactedFields: [{ uriPath: {} }],
      // What the edge refused or a counting rule matched; allowed requests are in the API's access log.
      loggingFilter: {
        DefaultBehavior: 'DROP',
        Filters: [
          {
            Behavior: 'KEEP',
            Requirement: 'MEETS_ANY',
            // EXCLUDED_AS_COUNT: what a managed group's rule matched while the group only counts.
            Conditions: ['BLOCK', 'COUNT', 'EXCLUDED_AS_COUNT'].map((action) => ({ ActionCondition: { Action: action } })),
          },
        ],
      },
    });

    // A caller blocked at the edge is news (a runaway client, a leaked token, a flood), and so is a
    // managed group that starts blocking: one alarm per rule.
    const limits: Record<string, string> = {
      [PER_CALLER_RULE]: `sent more than ${settings.callerRateLimit.toLocaleString('en-US')} requests in ${EDGE_RATE_WINDOW_SECONDS} seconds with one bearer token (callerRateLimit): a runaway client or agent, or a leaked token`,
      [ANONYMOUS_PATHS_RULE]: `sent more than ${settings.anonymousCallerRateLimit.toLocaleString('en-US')} requests in ${EDGE_RATE_WINDOW_SECONDS} seconds to the routes without a token from one address (anonymousCallerRateLimit): a flood on the SSO landing or the docs`,
      [PER_ADDRESS_RULE]: `sent more than ${settings.addressRateLimit.toLocaleString('en-US')} requests in ${EDGE_RATE_WINDOW_SECONDS} seconds from one address (addressRateLimit): a flood, possibly of made-up tokens, or a busy NAT`,
      [MANAGED_RULE_GROUPS.IpReputation.name]: 'came from an address on the Amazon IP reputation list (managedRules is block)',
      [MANAGED_RULE_GROUPS.KnownBadInputs.name]: 'carried a known bad input (managedRules is block)',
    };
    for (const rule of rules) {
      const alarm = new Alarm(stack, `${rule.name}BlockedAlarm`, {
        alarmDescription: `The WAF refused requests that ${limits[rule.name]}. The log group ${logGroupName} names the addresses (clientIp); the functions' request lines with that viewerAddress name the caller. ${RUNBOOK}`,
        metric: new Metric({
          namespace: 'AWS/WAFV2',
          metricName: 'BlockedRequests',
          // A CloudFront web ACL's metrics have no Region dimension, and are in us-east-1
          // (https://docs.aws.amazon.com/waf/latest/developerguide/waf-metrics.html).
          dimensionsMap: { WebACL: this.webAclMetricName, Rule: rule.name },
          statistic: 'Sum',
          period: Duration.minutes(5),
        }),
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
      this.blockAlarms[rule.name] = notifying(alarm, props.alarmAction);
    }
  }
}
