/**
 * The stored data migration at deploy (lib/stored-data-migration.ts): a custom resource of CDK's provider framework
 * whose isComplete function migrates for up to 15 minutes a call, called again every 30 s within CloudFormation's
 * hour; its role alone may Scan the table; and no function of the release is published before it is done.
 */
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { latestMigration } from '#functions/core/migrations/stored-data.ts';
import { tableActions, tableKeyActions } from '#lib/function-roles.ts';
import { synthesizeProduction } from '#test/support/stages.ts';

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DependsOn?: string[];
}
interface Statement {
  Sid?: string;
  Effect: string;
  Action: string | string[];
  Resource: unknown;
  Principal?: { AWS?: unknown };
}
type GetAtt = { 'Fn::GetAtt': [string, string] };

const asArray = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);
const actionsOf = (statement: Statement) => asArray(statement.Action).sort();
const arnOf = (logicalId: string): GetAtt => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });

function single<T>(items: readonly T[], what: string): T {
  if (items.length !== 1) throw new Error(`Expected exactly one ${what}, found ${items.length}`);
  return items[0] as T;
}

describe('the stored data migration', () => {
  const { stacks, service } = synthesizeProduction();
  const resources = service.toJSON().Resources as Record<string, Resource>;
  const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);
  const [migrationId, migration] = single(ofType('Custom::StoredDataMigration'), 'stored data migration');
  const tableId = single(ofType('AWS::DynamoDB::Table'), 'table')[0];
  const functionOf = (arn: unknown) => {
    const id = (arn as GetAtt)['Fn::GetAtt'][0];
    const fn = resources[id];
    expect(fn?.Type, id).toBe('AWS::Lambda::Function');
    return { id, fn: fn as Resource };
  };
  const variablesOf = (fn: Resource) =>
    (fn.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables ?? {};
  // The framework's entry function, which the resource names, and the two of the service it calls.
  const entry = functionOf(migration.Properties.ServiceToken);
  const started = functionOf(variablesOf(entry.fn).USER_ON_EVENT_FUNCTION_ARN);
  const complete = functionOf(variablesOf(entry.fn).USER_IS_COMPLETE_FUNCTION_ARN);
  const roleOf = (fn: Resource) => (fn.Properties.Role as GetAtt)['Fn::GetAtt'][0];
  /** What the IAM policies attached to a role grant it (the service's roles have no inline policy). */
  const statementsOf = (roleId: string) =>
    ofType('AWS::IAM::Policy')
      .filter(([, policy]) => JSON.stringify(policy.Properties.Roles).includes(JSON.stringify({ Ref: roleId })))
      .flatMap(([, policy]) => (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement);

  it('is a custom resource for the table, at the latest migration of this release', () => {
    expect(latestMigration).toBeGreaterThan(0);
    expect(migration.Properties).toEqual({
      ServiceToken: arnOf(entry.id),
      // CloudFormation's longest wait for a custom resource, an hour.
      ServiceTimeout: '3600',
      TableName: { Ref: tableId },
      LatestMigration: latestMigration,
    });
  });

  it('migrates in an isComplete function of 15 minutes that reaches the table, started by an onEvent function that does not', () => {
    expect(complete.fn.Properties.Timeout).toBe(900);
    expect(complete.fn.Properties.Handler).toBe('index.handler');
    expect(variablesOf(complete.fn)).toMatchObject({ TABLE_NAME: { Ref: tableId } });
    expect(started.fn.Properties.Timeout).toBeLessThanOrEqual(30);
    expect(variablesOf(started.fn).TABLE_NAME).toBeUndefined();
    expect(JSON.stringify(statementsOf(roleOf(started.fn)))).not.toContain('dynamodb:');
  });

  it('lets the isComplete role alone Scan, the table only, besides the read-write actions on the table and its indexes', () => {
    const roleId = roleOf(complete.fn);
    const tableArn = arnOf(tableId);
    const indexes = { 'Fn::Join': ['', [tableArn, '/index/*']] };
    const onTable = statementsOf(roleId).filter((statement) =>
      actionsOf(statement).some((action) => action.startsWith('dynamodb:')),
    );
    expect(onTable.map((statement) => ({ Action: actionsOf(statement), Resource: statement.Resource }))).toEqual([
      { Action: [...tableActions.readWrite, 'dynamodb:Scan'].sort(), Resource: tableArn },
      { Action: [...tableActions.readWrite].sort(), Resource: indexes },
    ]);
    // Every policy of the stage, standalone or inline: one statement may Scan, that one.
    const everyStatement = Object.values(resources).flatMap((resource) => [
      ...asArray((resource.Properties.PolicyDocument as { Statement?: Statement[] } | undefined)?.Statement),
      ...asArray(resource.Properties.Policies as { PolicyDocument: { Statement: Statement[] } }[] | undefined).flatMap(
        (policy) => policy.PolicyDocument.Statement,
      ),
    ]);
    const scanning = everyStatement.filter((statement) =>
      asArray(statement.Action).some((action) => /^dynamodb:(Scan|\*)$/.test(action)),
    );
    expect(scanning).toEqual([onTable[0]]);
    // DynamoDB uses the table's key for it as for the service's read-write functions.
    const keyPolicy = single(
      ofType('AWS::KMS::Key').filter(([, key]) => JSON.stringify(key).includes('FunctionsReadWriteThroughDynamoDB')),
      'table key',
    )[1].Properties.KeyPolicy as { Statement: Statement[] };
    const readWrite = keyPolicy.Statement.find((statement) => statement.Sid === 'FunctionsReadWriteThroughDynamoDB');
    expect(readWrite?.Action).toEqual(tableKeyActions.readWrite);
    expect(asArray(readWrite?.Principal?.AWS)).toContainEqual(arnOf(roleId));
  });

  it('calls isComplete every 30 s, up to an hour of calls, as CloudFormation waits at most an hour', () => {
    const [, waiter] = single(ofType('AWS::StepFunctions::StateMachine'), 'waiter state machine');
    const definition = JSON.stringify(waiter.Properties.DefinitionString);
    expect(definition).toContain('\\"IntervalSeconds\\":30');
    expect(definition).toContain(`\\"MaxAttempts\\":${3600 / 30}`);
  });

  it("runs the framework's functions with roles that may write their log group, no other, and no managed policy", () => {
    const frameworkLogs = single(
      ofType('AWS::Logs::LogGroup').filter(([id]) => id.startsWith('StoredDataMigrationProviderLogs')),
      'provider log group',
    )[0];
    // onEvent (the resource's entry), isComplete and onTimeout.
    const framework = ofType('AWS::Lambda::Function').filter(
      ([, fn]) => (fn.Properties.LoggingConfig as { LogGroup?: { Ref?: string } } | undefined)?.LogGroup?.Ref === frameworkLogs,
    );
    expect(framework.map(([id]) => id)).toContain(entry.id);
    expect(framework).toHaveLength(3);
    for (const [id, fn] of framework) {
      const roleId = roleOf(fn);
      expect(resources[roleId]?.Properties.ManagedPolicyArns, id).toBeUndefined();
      const logging = statementsOf(roleId).filter((statement) =>
        actionsOf(statement).some((action) => action.startsWith('logs:')),
      );
      expect(
        logging.map((statement) => statement.Resource),
        id,
      ).toEqual([arnOf(frameworkLogs)]);
    }
  });

  it('is what every nested stack of functions waits for: no version of the release is published before it is done', () => {
    const parent = Template.fromStack(stacks.service).toJSON().Resources as Record<string, Resource>;
    const nested = Object.entries(parent).filter(([, resource]) => resource.Type === 'AWS::CloudFormation::Stack');
    expect(nested).toHaveLength(stacks.service.functionStacks.nestedStacks.size);
    for (const [id, resource] of nested) expect(resource.DependsOn ?? [], id).toContain(migrationId);
  });
});
