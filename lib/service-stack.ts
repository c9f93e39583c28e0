import { Aws, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { behindEdgeVariable } from '#functions/core/edge/viewer-address.ts';
import { stageVariable } from '#functions/core/observability/names.ts';
import { AlarmTopics } from './alarm-topic.ts';
import { pascalCase } from './construct-ids.ts';
import { type DeploymentSettings, deploymentSettings, reservedConcurrency } from './deployment-settings.ts';
import { API_HOST_LABEL } from './edge-distributions.ts';
import { FunctionRoles } from './function-roles.ts';
import { FunctionStacks } from './function-stacks.ts';
import { ServiceMonitoring } from './monitoring.ts';
import { PayloadBucket } from './payload-bucket.ts';
import { QueueWorkers } from './queue-workers.ts';
import { ServiceApi } from './service-api.ts';
import { originAuthorizer } from './origin-secret.ts';
import { ServiceQueues } from './service-queues.ts';
import { ServiceTable } from './service-table.ts';
import { SigningKeys } from './signing-keys.ts';
import { StoredDataMigration } from './stored-data-migration.ts';
import { TableBackup } from './table-backup.ts';
import { ORIGIN_AUTHORIZER } from './throttling.ts';
import { TimedWorkers } from './timed-workers.ts';
import { TokenKeys, unsignedTokensSetting } from './token-keys.ts';

/**
 * Besides these props, the stack reads CDK context (see deployment-settings.ts): the alarm e-mail,
 * API throttling, consumer concurrency and the account's quota, the due index's shape, retentions,
 * and the token settings. The edge's settings are the edge stack's (lib/edge-settings.ts).
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
   * With it, callers reach the API only through the edge stack's CloudFront distributions
   * (lib/edge-stack.ts, deployed after this one): the `execute-api` address is off, and an authorizer
   * on every route refuses requests without the origin secret CloudFront adds. Needs
   * `tenantCertificateArn` (the distributions' origin is the regional tenant domain).
   */
  edge?: boolean;
}

/**
 * The whole service: one table, one HTTP API, one function per row of the route table, the functions in
 * nested stacks by area (lib/function-stacks.ts), so each template keeps room under CloudFormation's 500.
 *
 * The pieces (ServiceTable, ServiceQueues, ServiceApi, …) are plain classes that make their resources
 * with the stack itself as scope, not constructs of their own: a construct would add its id to every
 * logical id under it, and a changed logical id replaces the resource on deployment (the table with
 * every tenant's data). ServiceMonitoring and AlarmTopic are constructs: their ids (Monitoring, Alarms, and
 * TicketAlarms for the second topic) begin their resources' logical ids.
 */
export class ServiceStack extends Stack {
  readonly api: ServiceApi;
  /** The settings it was made with (the edge stack checks its limits against the route buckets). */
  readonly settings: DeploymentSettings;
  readonly tokenKeys: TokenKeys;
  /** The nested stacks of the functions, by area. */
  readonly functionStacks: FunctionStacks;
  /** Whether tokens of the unsigned form are still accepted (context `unsignedTokens`): the edge does the same. */
  readonly acceptsUnsignedTokens: boolean;

  constructor(scope: Construct, id: string, props: ServiceStackProps) {
    super(scope, id, props);
    if (props.edge && !props.tenantCertificateArn)
      throw new Error('The edge needs tenantCertificateArn: its origin is the API on the regional tenant domains');
    const settings = deploymentSettings(this, { edge: props.edge ?? false });
    this.settings = settings;

    const table = new ServiceTable(this, { ephemeral: props.ephemeral ?? false, dispatch: settings, retention: settings });
    // Daily backups, kept 35 days and copied to another account or region by setting; a throwaway stage has none.
    if (!props.ephemeral) new TableBackup(this, 'TableBackup', table);
    // Brings stored data to the shape this release reads, before any of its functions takes traffic (below).
    const migration = new StoredDataMigration(this, table);
    // Every alarm of the service notifies one of these, the page or the ticket topic (their ARNs are outputs).
    const alarmTopics = new AlarmTopics(this, settings);
    const queues = new ServiceQueues(this, alarmTopics.ticket.action);
    const payloads = new PayloadBucket(this, settings);
    const signingKeys = new SigningKeys(this, { retain: !(props.ephemeral ?? false) });
    this.tokenKeys = new TokenKeys(this, { retain: !(props.ephemeral ?? false) });
    const roles = new FunctionRoles(this, { table, queues, payloads, signingKeys, tokenKeys: this.tokenKeys });
    // Every route's and worker's function, in nested stacks by area, released through its live alias.
    const functionStacks = new FunctionStacks(this, { ephemeral: props.ephemeral ?? false });
    this.functionStacks = functionStacks;
    // A version published or an alias shifted before the migration is done would read data of the earlier shape.
    functionStacks.waitFor(migration.resource);
    // With the edge, an authorizer on every route lets through only what came through CloudFront.
    const origin = props.edge
      ? originAuthorizer(this, props.stage, reservedConcurrency(settings).get(ORIGIN_AUTHORIZER))
      : undefined;

    const api = new ServiceApi(this, {
      stage: props.stage,
      tenantBaseDomain: props.tenantBaseDomain,
      tenantCertificateArn: props.tenantCertificateArn,
      disableExecuteApiEndpoint: props.edge ?? false,
      authorizer: origin?.authorizer,
      settings,
      table,
      queues,
      payloads,
      signingKeys,
      tokenKeys: this.tokenKeys,
      roles,
      functionStacks,
    });
    this.api = api;
    const queueWorkers = new QueueWorkers({ settings, table, queues, payloads, roles, functionStacks });
    const timedWorkers = new TimedWorkers({ settings, table, queues, roles, functionStacks });
    const functions = [
      ...api.functions,
      ...queueWorkers.functions,
      ...timedWorkers.functions,
      ...(origin ? [{ name: 'OriginAuthorizer', fn: origin.fn }] : []),
    ];
    const unsignedTokens = unsignedTokensSetting(this);
    this.acceptsUnsignedTokens = unsignedTokens === 'accept';
    // The stage in every metric the functions emit (two stages in one account never watch each other's),
    // and whether they accept unsigned tokens.
    for (const { fn } of functions) {
      fn.addEnvironment(stageVariable, props.stage);
      fn.addEnvironment('UNSIGNED_TOKENS', unsignedTokens);
      // Behind the edge, CloudFront-Viewer-Address is CloudFront's to set: the functions log it.
      if (props.edge) fn.addEnvironment(behindEdgeVariable, 'true');
    }

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
      alarmTopics,
      availabilityObjective: settings.availabilityObjective,
      tableKey: table.key,
      keyrings: [signingKeys.secret, this.tokenKeys.secret],
    });
    // A release stops and rolls back while the service's users see errors or slowness, whichever function causes it.
    functionStacks.watchServiceAlarms(monitoring.symptomAlarms);

    // What integrators call: with the edge, the edge stack's distribution on `api.<tenantBaseDomain>`.
    new CfnOutput(this, 'ApiUrl', {
      value: props.edge ? `https://${API_HOST_LABEL}.${props.tenantBaseDomain}` : api.api.apiEndpoint,
    });
    // Without the edge, where the wildcard DNS record `*.<tenantBaseDomain>` points (with it, the edge stack says).
    if (api.tenantDomains && !props.edge)
      new CfnOutput(this, 'TenantDomainTarget', { value: api.tenantDomains.regionalDomainName });
    // With the edge, the distributions' origin: what a front end's own distribution adds for /auth/* and /.well-known/*.
    if (api.tenantDomains && props.edge)
      new CfnOutput(this, 'ApiOriginDomainName', { value: api.tenantDomains.regionalDomainName });
    new CfnOutput(this, 'TableName', { value: table.table.tableName });
    new CfnOutput(this, 'TableKeyArn', { value: table.key.keyArn });
    new CfnOutput(this, 'SigningKeysSecretArn', { value: signingKeys.secret.secretArn });
    new CfnOutput(this, 'TokenKeysSecretArn', { value: this.tokenKeys.secret.secretArn });
    new CfnOutput(this, 'PayloadBucketName', { value: payloads.bucket.bucketName });
    // Where `npm run admin -- rollout start` queues a rollout's first step (ROLLOUT_QUEUE_URL).
    new CfnOutput(this, 'RolloutQueueUrl', { value: queues.queues.rollout.queueUrl });
    // What a DLQ redrive needs (docs/operations.md): each queue's ARN, its DLQ's URL and ARN.
    for (const { name, queue, deadLetterQueue } of queues.all) {
      const id = pascalCase(name);
      new CfnOutput(this, `${id}QueueArn`, { value: queue.queueArn });
      new CfnOutput(this, `${id}DeadLetterQueueUrl`, { value: deadLetterQueue.queueUrl });
      new CfnOutput(this, `${id}DeadLetterQueueArn`, { value: deadLetterQueue.queueArn });
    }
    new CfnOutput(this, 'PageTopicArn', { value: alarmTopics.page.topic.topicArn });
    new CfnOutput(this, 'TicketTopicArn', { value: alarmTopics.ticket.topic.topicArn });
    new CfnOutput(this, 'ApiAccessLogGroupName', { value: api.accessLogs.logGroupName });
    new CfnOutput(this, 'DashboardUrl', {
      value: `https://${Aws.REGION}.console.aws.amazon.com/cloudwatch/home?region=${Aws.REGION}#dashboards:name=${monitoring.dashboardName}`,
    });
  }
}
