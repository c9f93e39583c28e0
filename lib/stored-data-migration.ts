import { CustomResource, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type { CfnTable } from 'aws-cdk-lib/aws-dynamodb';
import { type IRole, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { CfnFunction, IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Provider } from 'aws-cdk-lib/custom-resources';
import { latestMigration } from '#functions/core/migrations/stored-data.ts';
import { tableActions, tableKeyActions } from './function-roles.ts';
import { functionWithOwnRole } from './project-function.ts';
import type { ServiceTable } from './service-table.ts';

/** How long one call of the isComplete function may run: Lambda's maximum, most of it migrating. */
export const MIGRATION_CALL_SECONDS = 900;
/** The pause between two calls of the isComplete function while the table is not done. */
export const MIGRATION_QUERY_INTERVAL = Duration.seconds(30);
/**
 * How long CloudFormation waits for the resource: ServiceTimeout's maximum, 3600 s
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-cloudformation-customresource.html).
 * The provider framework's totalTimeout may be no longer: its documentation once said 2 hours, but CloudFormation
 * gives up after one (https://github.com/aws/aws-cdk/issues/24974, corrected by aws/aws-cdk#27533).
 */
export const MIGRATION_TIMEOUT = Duration.hours(1);

/**
 * The stored data migration at deploy (issue 36, functions/core/store/migrations.ts): a custom resource under CDK's
 * provider framework (https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.custom_resources-readme.html, its
 * "Asynchronous Providers: isComplete"), whose isComplete function runs the migrations the table has not had for
 * most of its 15 minutes and is called again every 30 s until the table has them all, within CloudFormation's hour.
 * Its `LatestMigration` property is the highest version of this release: a release that adds a migration changes it,
 * so its deploy sends the resource an Update, which runs it. Every nested stack of functions waits for it
 * (service-stack.ts), so none of the release's versions takes traffic before the data is in the shape it reads.
 */
export class StoredDataMigration {
  /** What the functions of the release wait for. */
  readonly resource: CustomResource;

  constructor(stack: Stack, table: ServiceTable) {
    // It only names the resource (functions/deploy/stored-data-migration-started.ts): no table, nothing else.
    const started = functionWithOwnRole(stack, 'StoredDataMigrationStarted', {
      entry: 'functions/deploy/stored-data-migration-started.ts',
      description: 'Custom resource (onEvent): starts the stored data migration, which StoredDataMigrationComplete runs',
      environment: {},
      timeoutSeconds: 30,
      statements: [],
    });
    const tableArn = table.table.tableArn;
    // What the runner and the migrations call (functions/core/migrations/), on the table and its indexes; Scan only
    // on the table, which the runner reads page by page. No other role of the service may Scan (test/infra/iam-actions.test.ts).
    const complete = functionWithOwnRole(stack, 'StoredDataMigrationComplete', {
      entry: 'functions/deploy/stored-data-migration-complete.ts',
      description: 'Custom resource (isComplete): migrates stored data to the shape of this release, until done',
      environment: table.environment,
      timeoutSeconds: MIGRATION_CALL_SECONDS,
      statements: [
        new PolicyStatement({ actions: [...tableActions.readWrite, 'dynamodb:Scan'], resources: [tableArn] }),
        new PolicyStatement({ actions: tableActions.readWrite, resources: [`${tableArn}/index/*`] }),
      ],
    });
    const migrationRole = complete.role;
    if (!migrationRole) throw new Error('StoredDataMigrationComplete has no role');
    // Through DynamoDB only, in the key's policy: in the statement of the service's read-write functions (function-roles.ts),
    // which has the same actions (one statement rather than two: the key policy takes 32 KB).
    table.allowUseThroughDynamoDB('FunctionsReadWriteThroughDynamoDB', migrationRole, tableKeyActions.readWrite);
    const tableLogicalId = stack.resolve((table.table.node.defaultChild as CfnTable).logicalId) as string;
    Validations.of(migrationRole).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${tableLogicalId}.Arn>/index/*]`,
      reason:
        "The wildcard covers only the indexes of the service's table, which a migration queries as the service's " +
        'functions do, with the same named actions; Scan is granted on the table alone.',
    });

    // The framework's three functions log here, kept as long as the service's functions keep theirs (project-function.ts).
    const frameworkLogs = new LogGroup(stack, 'StoredDataMigrationProviderLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // Roles of their own for the framework's functions, rather than its default ones with AWSLambdaBasicExecutionRole,
    // which may write (and create) every log group of the account: this group only, and what the framework grants.
    const frameworkRole = (id: string, functions: string) => {
      const role = new Role(stack, id, {
        assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
        description: `CDK's provider framework of the stored data migration: its ${functions}`,
      });
      role.addToPolicy(
        new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [frameworkLogs.logGroupArn] }),
      );
      return role;
    };
    // Two roles, as the framework asks: with one for both, the state machine and the function starting it would wait on
    // each other (a circular dependency).
    const onEventRole = frameworkRole('StoredDataMigrationProviderOnEventRole', 'onEvent function');
    const completeRole = frameworkRole('StoredDataMigrationProviderCompleteRole', 'isComplete and onTimeout functions');
    const provider = new Provider(stack, 'StoredDataMigrationProvider', {
      onEventHandler: started,
      isCompleteHandler: complete,
      queryInterval: MIGRATION_QUERY_INTERVAL,
      // The framework makes this a number of calls (totalTimeout / queryInterval: 120), not a time: a call that migrates
      // for 15 minutes counts as one. CloudFormation's hour (serviceTimeout, below) is what bounds the deploy.
      totalTimeout: MIGRATION_TIMEOUT,
      logGroup: frameworkLogs,
      frameworkOnEventRole: onEventRole,
      frameworkCompleteAndTimeoutRole: completeRole,
    });
    acknowledgeProviderFindings(provider, [onEventRole, completeRole]);
    this.resource = new CustomResource(stack, 'StoredDataMigration', {
      serviceToken: provider.serviceToken,
      resourceType: 'Custom::StoredDataMigration',
      serviceTimeout: MIGRATION_TIMEOUT,
      properties: { TableName: table.table.tableName, LatestMigration: latestMigration },
    });
  }
}

/**
 * The cdk-nag findings of what CDK's provider framework makes (its roles' grants, its waiter state machine), each on
 * the construct it concerns: none can be changed through the framework's properties.
 */
function acknowledgeProviderFindings(provider: Provider, frameworkRoles: readonly IRole[]): void {
  const stack = Stack.of(provider);
  const invokeVersions = (fn: IFunction) => ({
    id: `AwsSolutions-IAM5[Resource::<${stack.resolve((fn.node.defaultChild as CfnFunction).logicalId) as string}.Arn>:*]`,
    reason:
      `The framework's grantInvoke on ${fn.node.id} covers that one function's versions and aliases (its ARN ` +
      'followed by :*), as Lambda names a qualified invocation; no other function.',
  });
  const userFunctions = [provider.onEventHandler, provider.isCompleteHandler].filter((fn) => fn !== undefined);
  for (const role of frameworkRoles) for (const fn of userFunctions) Validations.of(role).acknowledge(invokeVersions(fn));
  // The waiter: a Step Functions state machine that calls the framework's isComplete function every queryInterval,
  // and its onTimeout function once totalTimeout's attempts are spent.
  const waiter = provider.node.findChild('waiter-state-machine');
  const waiterTasks = ['framework-isComplete', 'framework-onTimeout'].map((id) => provider.node.findChild(id) as IFunction);
  for (const fn of waiterTasks) Validations.of(waiter).acknowledge(invokeVersions(fn));
  Validations.of(waiter).acknowledge({
    id: 'AwsSolutions-SF1',
    reason:
      'A Standard workflow keeps its execution history in Step Functions itself, every isComplete call and its ' +
      'answer included (https://docs.aws.amazon.com/step-functions/latest/dg/cw-logs.html); logging it to CloudWatch ' +
      "Logs too would need the log delivery actions on the resource * in the waiter's role. The migration function " +
      '(StoredDataMigrationComplete) logs each run.',
  });
  Validations.of(waiter).acknowledge({
    id: 'AwsSolutions-SF2',
    reason:
      "The provider framework's state machine has no tracing setting; it only calls the framework's isComplete " +
      'function, and the migration function it reaches is traced with X-Ray as every function of the service is.',
  });
}
