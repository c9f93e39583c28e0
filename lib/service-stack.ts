import { Aws, CfnOutput, CrossStackReferences, ReferenceStrength, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { stageVariable } from '#functions/core/observability/names.ts';
import { AlarmTopic } from './alarm-topic.ts';
import { pascalCase } from './construct-ids.ts';
import { deploymentSettings, edgeSettings } from './deployment-settings.ts';
import { FunctionRoles } from './function-roles.ts';
import { ServiceMonitoring } from './monitoring.ts';
import { PayloadBucket } from './payload-bucket.ts';
import { QueueWorkers } from './queue-workers.ts';
import { ServiceApi } from './service-api.ts';
import { API_HOST_LABEL, ServiceEdge } from './service-edge.ts';
import { ServiceQueues } from './service-queues.ts';
import { ServiceTable } from './service-table.ts';
import { SigningKeys } from './signing-keys.ts';
import { TimedWorkers } from './timed-workers.ts';

/**
 * Besides these props, the stack reads CDK context (see deployment-settings.ts): the alarm e-mail,
 * API throttling, consumer concurrency and the account's quota, the due index's shape, retentions,
 * and with the edge its CloudFront price class.
 */
export interface ServiceStackProps extends StackProps {
  stage: string;
  /** A throwaway stage (lib/stage.ts): the table may then be deleted; otherwise deletion protection is on. */
  ephemeral?: boolean;
  tenantBaseDomain: string;
  /**
   * ACM certificate for `*.<tenantBaseDomain>` (in the stack's region). With it, the API also answers
   * on every tenant domain, so login URLs reach the SSO landing; point a wildcard DNS record at the
   * `TenantDomainTarget` output.
   */
  tenantCertificateArn?: string;
  /**
   * With it, callers reach the API only through a CloudFront distribution on the tenant domains, behind
   * the WAF web ACL of EdgeFirewallStack (per-caller rate limits), and the `execute-api` address is off.
   * Needs `tenantCertificateArn` (the distribution's origin is the regional tenant domain). The wildcard
   * DNS record then points at the distribution (`TenantDomainTarget` says where either way).
   */
  edge?: {
    /** ACM certificate of `*.<tenantBaseDomain>` in us-east-1. */
    certificateArn: string;
    /** The web ACL's ARN (a cross-region reference when the stack is not in us-east-1: `crossRegionReferences`). */
    webAclArn: string;
  };
}

/**
 * The whole service: one table, one HTTP API, one function per row of the route table.
 *
 * The pieces (ServiceTable, ServiceQueues, ServiceApi, …) are plain classes that make their resources
 * with the stack itself as scope, not constructs of their own: a construct would add its id to every
 * logical id under it, and a changed logical id replaces the resource on deployment (the table with
 * every tenant's data). ServiceMonitoring and AlarmTopic are constructs: their ids (Monitoring, Alarms)
 * have always begun their resources' logical ids.
 */
export class ServiceStack extends Stack {
  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);
    // The web ACL's ARN comes from the us-east-1 stack through CDK's ExportWriter and ExportReader (an SSM
    // parameter in this region): strong, so that stack cannot delete the ACL while the distribution uses it.
    // Said here, before any resource: it is context of this stack.
    if (props.edge) CrossStackReferences.of(this).consume(ReferenceStrength.STRONG);
    if (props.edge && !props.tenantCertificateArn)
      throw new Error('The edge needs tenantCertificateArn: its origin is the API on the regional tenant domains');
    const settings = deploymentSettings(this);

    const table = new ServiceTable(this, { ephemeral: props.ephemeral ?? false, dispatch: settings, retention: settings });
    // Every alarm of the service notifies this one topic (the ARN is an output).
    const alarmTopic = new AlarmTopic(this, 'Alarms', { email: settings.alarmEmail });
    const queues = new ServiceQueues(this, alarmTopic.action);
    const payloads = new PayloadBucket(this, settings);
    const signingKeys = new SigningKeys(this);
    const roles = new FunctionRoles(this, { table, queues, payloads, signingKeys });

    const api = new ServiceApi(this, {
      stage: props.stage,
      tenantBaseDomain: props.tenantBaseDomain,
      tenantCertificateArn: props.tenantCertificateArn,
      disableExecuteApiEndpoint: props.edge !== undefined,
      throttle: { rateLimit: settings.apiRateLimit, burstLimit: settings.apiBurstLimit },
      anonymousThrottle: { rateLimit: settings.anonymousRateLimit, burstLimit: settings.anonymousBurstLimit },
      table,
      queues,
      payloads,
      signingKeys,
      roles,
    });
    const queueWorkers = new QueueWorkers(this, { settings, table, queues, payloads, roles });
    const timedWorkers = new TimedWorkers(this, { table, queues, roles });
    const functions = [...api.functions, ...queueWorkers.functions, ...timedWorkers.functions];
    roles.allowLogWriting(functions);
    // The stage in every metric the functions emit: two stages in one account never watch each other's.
    for (const { fn } of functions) fn.addEnvironment(stageVariable, props.stage);

    const monitoring = new ServiceMonitoring(this, 'Monitoring', {
      stage: props.stage,
      api: api.api,
      accessLogs: api.accessLogs,
      table: table.table,
      accountConcurrencyLimit: settings.accountConcurrencyLimit,
      functions,
      timedFunctions: timedWorkers.functions,
      queueConsumers: queueWorkers.functions.map(({ handler, fn }) => ({ name: handler, fn })),
      queues: queues.all,
      otherAlarms: queues.deadLetterAlarms,
      alarmAction: alarmTopic.action,
    });

    const edge =
      props.edge && api.tenantDomains
        ? new ServiceEdge(this, {
            tenantBaseDomain: props.tenantBaseDomain,
            tenantDomains: api.tenantDomains,
            certificateArn: props.edge.certificateArn,
            webAclArn: props.edge.webAclArn,
            priceClass: edgeSettings(this).priceClass,
          })
        : undefined;

    // What integrators call: with the edge, a name on the tenant domains' wildcard (so through the distribution).
    new CfnOutput(this, 'ApiUrl', { value: edge ? `https://${API_HOST_LABEL}.${props.tenantBaseDomain}` : api.api.apiEndpoint });
    // Where the wildcard DNS record `*.<tenantBaseDomain>` points: the distribution, or else the API's regional domain.
    if (api.tenantDomains)
      new CfnOutput(this, 'TenantDomainTarget', {
        value: edge ? edge.distribution.distributionDomainName : api.tenantDomains.regionalDomainName,
      });
    if (edge) new CfnOutput(this, 'EdgeDistributionId', { value: edge.distribution.distributionId });
    new CfnOutput(this, 'TableName', { value: table.table.tableName });
    new CfnOutput(this, 'TableKeyArn', { value: table.key.keyArn });
    new CfnOutput(this, 'SigningKeysSecretArn', { value: signingKeys.secret.secretArn });
    new CfnOutput(this, 'PayloadBucketName', { value: payloads.bucket.bucketName });
    // What a DLQ redrive needs (docs/operations.md): each queue's ARN, its DLQ's URL and ARN.
    for (const { name, queue, deadLetterQueue } of queues.all) {
      const id = pascalCase(name);
      new CfnOutput(this, `${id}QueueArn`, { value: queue.queueArn });
      new CfnOutput(this, `${id}DeadLetterQueueUrl`, { value: deadLetterQueue.queueUrl });
      new CfnOutput(this, `${id}DeadLetterQueueArn`, { value: deadLetterQueue.queueArn });
    }
    new CfnOutput(this, 'AlarmTopicArn', { value: alarmTopic.topic.topicArn });
    new CfnOutput(this, 'ApiAccessLogGroupName', { value: api.accessLogs.logGroupName });
    new CfnOutput(this, 'DashboardUrl', {
      value: `https://${Aws.REGION}.console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards:name=${monitoring.dashboardName}`,
    });
  }
}
