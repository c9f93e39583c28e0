/**
 * Assertions on the synthesized CloudFormation of ServiceStack. The route table is the source of
 * truth: every expectation about functions, API routes and IAM grants is derived from its rows,
 * so adding a route without wiring it (or wiring it with the wrong access) fails here.
 */
import { execFile, execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { CreateQueueCommand, DeleteQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import { ASSET_RESOURCE_METADATA_ENABLED_CONTEXT, ASSET_RESOURCE_METADATA_PATH_KEY } from 'aws-cdk-lib/cx-api';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bundleBudgetBytes } from '#bench/bundles.ts';
import { lambdaAsyncPayloadBytes, sqsMessageBytes } from '#functions/core/aws-limits.ts';
import { scheduleItem } from '#functions/core/schedules/schedule-repository.ts';
import { queueDefinitions, queueUrlVariable } from '#functions/core/store/queue-definitions.ts';
import { clientGroup, tenantGroup } from '#functions/core/store/queues.ts';
import { tableDefinition } from '#functions/core/store/table-definition.ts';
import { queueConsumers, type Route, routeKey, routes, timedFunctions, unmatchedRoute } from '#functions/routes.ts';
import { consumerIdOf, functionIdOf } from '#lib/construct-ids.ts';
import { routeEntry, workerEntry } from '#lib/function-bundles.ts';
import { tokenUseGrants } from '#functions/core/auth/token-use.ts';
import { tableActions } from '#lib/function-roles.ts';
import { LIVE_ALIAS, RELEASE_ERROR_PERCENT, RELEASE_LATENCY_SHARE, RELEASE_MIN_ERRORS } from '#lib/function-stacks.ts';
import { ServiceStack } from '#lib/service-stack.ts';
import { createTableInput, ensureTable } from '#local/create-table.ts';
import { api, newClient, newTenant } from '#test/support/api.ts';
import { testApp } from '#test/support/cdk-app.ts';
import { publish, retailBundle } from '#test/support/templates.ts';
import { deployTimeFunctionIds, refersTo, wholeTemplate } from '#test/support/whole-template.ts';

const TENANT_BASE_DOMAIN = 'bi.example.com';

/** The parts of the CloudFormation resources these tests read; everything else is matched with `Match`. */
interface CfnResource<P = Record<string, unknown>> {
  Type: string;
  Properties: P;
  Metadata?: Record<string, unknown>;
  DeletionPolicy?: string;
}
type Ref = { Ref: string };
type GetAtt = { 'Fn::GetAtt': [string, string] };
type LambdaFunction = CfnResource<{ Role: GetAtt; Handler?: string; LoggingConfig?: { LogGroup?: Ref } }>;
type HttpRoute = CfnResource<{ RouteKey: string; Target: unknown }>;
type HttpIntegration = CfnResource<{ IntegrationUri: unknown }>;
type IamRole = CfnResource<{ Policies?: { PolicyDocument: PolicyDocument }[] }>;
type IamPolicy = CfnResource<{ Roles: unknown[]; PolicyDocument: PolicyDocument }>;
interface PolicyDocument {
  Statement: PolicyStatement[];
}
interface PolicyStatement {
  Effect: 'Allow' | 'Deny';
  Action?: string | string[];
  NotAction?: unknown;
  Resource?: unknown;
  NotResource?: unknown;
}

const synthesized = new Map<string, Template>();

/**
 * The stack's template, synthesized without running esbuild, once per stage in this file (the tests
 * only read it; each synthesis of the whole stack takes seconds).
 */
function synthesizeTemplate(stage: string): Template {
  let template = synthesized.get(stage);
  if (!template) {
    template = wholeTemplate(new ServiceStack(testApp(), 'Test', { stage, tenantBaseDomain: TENANT_BASE_DOMAIN }));
    synthesized.set(stage, template);
  }
  return template;
}

function resourcesOfType<R extends CfnResource>(template: Template, type: string): Record<string, R> {
  return template.findResources(type) as Record<string, R>;
}

function single<T>(items: readonly T[], what: string): T {
  if (items.length !== 1) throw new Error(`Expected exactly one ${what}, found ${items.length}`);
  return items[0] as T;
}

function asArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * CDK logical ids are `<construct id><8 hex hash>`. Matching the whole id matters: `GetTenant` is a
 * prefix of `GetTenants…`, and `PostTenants` of `PostTenantsLogs…` and `PostTenantsDelete…`.
 */
function isLogicalIdOf(constructId: string, logicalId: string): boolean {
  return new RegExp(`^${constructId}[0-9A-F]{8}$`).test(logicalId);
}

/** The function of a queue consumer or a timed function, by its handler. */
function workerLogicalIdOf(template: Template, worker: { handler: string }): string {
  const ids = Object.keys(resourcesOfType(template, 'AWS::Lambda::Function')).filter((id) =>
    isLogicalIdOf(consumerIdOf(worker.handler), id),
  );
  return single(ids, `Lambda function for ${worker.handler}`);
}

function functionLogicalIdOf(template: Template, route: Route): string {
  const ids = Object.keys(resourcesOfType(template, 'AWS::Lambda::Function')).filter((id) =>
    isLogicalIdOf(functionIdOf(route), id),
  );
  return single(ids, `Lambda function for ${routeKey(route)}`);
}

/** The live alias of a function (what API Gateway, the event sources and the rules invoke), by the function's logical id. */
function aliasLogicalIdOf(template: Template, functionLogicalId: string): string {
  const aliases = resourcesOfType<CfnResource<{ FunctionName: Ref; Name: string }>>(template, 'AWS::Lambda::Alias');
  const ids = Object.entries(aliases)
    .filter(([, alias]) => alias.Properties.FunctionName.Ref === functionLogicalId)
    .map(([id]) => id);
  const id = single(ids, `alias of ${functionLogicalId}`);
  expect(aliases[id]?.Properties.Name).toBe(LIVE_ALIAS);
  return id;
}

/** The function behind a live alias. */
function functionOfAlias(template: Template, aliasLogicalId: string): string {
  const alias = resourcesOfType<CfnResource<{ FunctionName: Ref }>>(template, 'AWS::Lambda::Alias')[aliasLogicalId];
  expect(alias, `alias ${aliasLogicalId}`).toBeDefined();
  return alias?.Properties.FunctionName.Ref as string;
}

/**
 * The functions of the route table's rows (routes, the unmatched route, consumers, timers): the service's
 * stack also has functions of its own deployment (the origin authorizer, and those custom resources run at deploy:
 * deployTimeFunctionIds).
 */
function serviceFunctionIds(template: Template): string[] {
  return [
    ...routes.map((route) => functionLogicalIdOf(template, route)),
    workerLogicalIdOf(template, unmatchedRoute),
    ...queueConsumers.map((consumer) => workerLogicalIdOf(template, consumer)),
    ...timedFunctions.map((timed) => workerLogicalIdOf(template, timed)),
  ];
}

function tableLogicalIdOf(template: Template): string {
  return single(Object.keys(resourcesOfType(template, 'AWS::DynamoDB::Table')), 'DynamoDB table');
}

/** Route.Target is `integrations/<Ref to integration>`; the integration's URI is the function's live alias. */
function functionTargetedByRoute(template: Template, route: HttpRoute): string {
  const target = route.Properties.Target as { 'Fn::Join': [string, [string, Ref]] };
  expect(target).toEqual({ 'Fn::Join': ['', ['integrations/', { Ref: expect.any(String) }]] });
  const integrationId = target['Fn::Join'][1][1].Ref;
  const integration = resourcesOfType<HttpIntegration>(template, 'AWS::ApiGatewayV2::Integration')[integrationId];
  expect(integration, `integration ${integrationId}`).toBeDefined();
  const uri = integration?.Properties.IntegrationUri as Ref;
  expect(uri).toEqual({ Ref: expect.any(String) });
  return functionOfAlias(template, uri.Ref);
}

/** Every statement that applies to the role: policies attached to it and the role's inline policies. */
function statementsGrantedToRole(template: Template, roleId: string): PolicyStatement[] {
  const attached = Object.values(
    template.findResources('AWS::IAM::Policy', { Properties: { Roles: Match.arrayWith([{ Ref: roleId }]) } }),
  ) as IamPolicy[];
  const role = resourcesOfType<IamRole>(template, 'AWS::IAM::Role')[roleId];
  expect(role, `role ${roleId}`).toBeDefined();
  const documents = [
    ...attached.map((policy) => policy.Properties.PolicyDocument),
    ...(role?.Properties.Policies ?? []).map((inline) => inline.PolicyDocument),
  ];
  return documents.flatMap((document) => asArray(document.Statement));
}

function statementsOfFunction(template: Template, route: Route): PolicyStatement[] {
  const fn = resourcesOfType<LambdaFunction>(template, 'AWS::Lambda::Function')[functionLogicalIdOf(template, route)];
  const roleId = fn?.Properties.Role['Fn::GetAtt'][0];
  if (!roleId) throw new Error(`No role on the function of ${routeKey(route)}`);
  return statementsGrantedToRole(template, roleId);
}

/** IAM action names are case-insensitive, and `*` or `dynamodb:*` grant DynamoDB too. */
const isDynamoDbAction = (action: string) => action === '*' || action.toLowerCase().startsWith('dynamodb:');

function dynamoDbStatements(statements: PolicyStatement[]): PolicyStatement[] {
  return statements.filter((statement) => asArray(statement.Action).some(isDynamoDbAction));
}

function allowedDynamoDbActions(statements: PolicyStatement[]): string[] {
  return statements
    .filter((statement) => statement.Effect === 'Allow')
    .flatMap((statement) => asArray(statement.Action))
    .filter(isDynamoDbAction)
    .map((action) => action.toLowerCase());
}

// Everything that changes data, including batch and transaction forms (grantReadData must not give any).
const DYNAMODB_WRITE_ACTIONS = [
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
  'dynamodb:TransactWriteItems',
  'dynamodb:PartiQLInsert',
  'dynamodb:PartiQLUpdate',
  'dynamodb:PartiQLDelete',
  'dynamodb:UpdateTable',
  'dynamodb:DeleteTable',
].map((action) => action.toLowerCase());

const isWriteOrWildcard = (action: string) => DYNAMODB_WRITE_ACTIONS.includes(action) || action.includes('*');

const lowerCased = (actions: string[]) => actions.map((action) => action.toLowerCase());

describe('ServiceStack', () => {
  let template: Template;
  let tableId: string;

  beforeAll(() => {
    template = synthesizeTemplate('test');
    tableId = tableLogicalIdOf(template);
  });

  describe('functions', () => {
    it('gives every route its own construct id, so one function per route is possible', () => {
      expect(new Set(routes.map(functionIdOf)).size).toBe(routes.length);
    });

    it('builds exactly one Lambda function per route, for what no route matches, per queue consumer and per timed function, and no others', () => {
      const built = serviceFunctionIds(template);
      expect(new Set(built).size).toBe(routes.length + 1 + queueConsumers.length + timedFunctions.length);
      // Besides them, only the deployment's own, run by custom resources: the first signing key's, and the stored data
      // migration's two with the three of CDK's provider framework that call them.
      const others = Object.keys(resourcesOfType(template, 'AWS::Lambda::Function')).filter((id) => !built.includes(id));
      expect(others.sort()).toEqual([...deployTimeFunctionIds(template)].sort());
      expect(others.map((id) => id.replace(/[0-9A-F]{8}$/, '')).sort()).toEqual(
        [
          'FirstSigningKey',
          'StoredDataMigrationStarted',
          'StoredDataMigrationComplete',
          'StoredDataMigrationProviderframeworkonEvent',
          'StoredDataMigrationProviderframeworkisComplete',
          'StoredDataMigrationProviderframeworkonTimeout',
        ].sort(),
      );
    });

    it('publishes every function and invokes it through its live alias, which CodeDeploy shifts and rolls back', () => {
      type AliasResource = { UpdatePolicy?: { CodeDeployLambdaAliasUpdate?: { DeploymentGroupName: Ref } } };
      type Group = CfnResource<{
        AlarmConfiguration: { Enabled: boolean; Alarms: unknown[] };
        AutoRollbackConfiguration: { Enabled: boolean; Events: string[] };
        DeploymentConfigName: string;
      }>;
      const resources = template.toJSON().Resources as Record<string, AliasResource>;
      const groups = resourcesOfType<Group>(template, 'AWS::CodeDeploy::DeploymentGroup');
      const symptomAlarmIds = Object.keys({
        ...template.findResources('AWS::CloudWatch::Alarm'),
        ...template.findResources('AWS::CloudWatch::CompositeAlarm'),
      })
        .filter((alarmId) => /^Monitoring(ApiErrorBudgetBurn|ApiLatency|ScheduleMisses)Alarm[0-9A-F]{8}$/.test(alarmId))
        .sort();
      expect(symptomAlarmIds).toHaveLength(3);
      for (const id of serviceFunctionIds(template)) {
        const update = resources[aliasLogicalIdOf(template, id)]?.UpdatePolicy?.CodeDeployLambdaAliasUpdate;
        const group = groups[update?.DeploymentGroupName.Ref ?? ''];
        expect(group, `deployment group of ${id}`).toBeDefined();
        // 10% of the traffic for 5 minutes, then all (an ephemeral stage shifts at once: below).
        expect(group?.Properties.DeploymentConfigName).toBe('CodeDeployDefault.LambdaCanary10Percent5Minutes');
        expect(group?.Properties.AlarmConfiguration.Enabled).toBe(true);
        const alarmIds = group?.Properties.AlarmConfiguration.Alarms.map((alarm) => (alarm as { Name: Ref }).Name.Ref) ?? [];
        // Its own two: failures of its live alias, and its p99 near its time-out.
        const own = alarmIds.filter((alarmId) => alarmId.startsWith(id.replace(/[0-9A-F]{8}$/, '')));
        expect(own).toHaveLength(2);
        const ownAlarms = own.map((alarmId) => template.toJSON().Resources[alarmId] as CfnResource<Record<string, unknown>>);
        const errors = ownAlarms.find((alarm) => alarm.Properties.Metrics !== undefined);
        expect(JSON.stringify(errors?.Properties.Metrics)).toContain(
          `IF(errors >= ${RELEASE_MIN_ERRORS} AND 100 * errors > ${RELEASE_ERROR_PERCENT} * invocations, 1, 0)`,
        );
        const latency = ownAlarms.find((alarm) => alarm.Properties.Metrics === undefined);
        const timeout = resourcesOfType<CfnResource<{ Timeout: number }>>(template, 'AWS::Lambda::Function')[id]?.Properties
          .Timeout as number;
        expect(latency?.Properties).toMatchObject({
          ExtendedStatistic: 'p99',
          Threshold: timeout * 1000 * RELEASE_LATENCY_SHARE,
        });
        // Both watch the live alias (Lambda's `Resource` dimension `<function>:live`), not every version of the function.
        for (const alarm of ownAlarms) {
          expect(refersTo(alarm.Properties, id)).toBe(true);
          expect(JSON.stringify(alarm.Properties)).toContain(`":${LIVE_ALIAS}"`);
        }
        // And the service's paging symptoms, the same in every group: a release stops while users see them.
        expect(alarmIds.filter((alarmId) => !own.includes(alarmId)).sort()).toEqual(symptomAlarmIds);
        expect(group?.Properties.AutoRollbackConfiguration.Enabled).toBe(true);
        expect(group?.Properties.AutoRollbackConfiguration.Events.sort()).toEqual(
          ['DEPLOYMENT_FAILURE', 'DEPLOYMENT_STOP_ON_ALARM', 'DEPLOYMENT_STOP_ON_REQUEST'].sort(),
        );
      }
    });

    it('runs every function on Node.js 22, arm64, with X-Ray and the table', () => {
      const conforming = template.findResources('AWS::Lambda::Function', {
        Properties: {
          Runtime: 'nodejs22.x',
          Architectures: ['arm64'],
          TracingConfig: { Mode: 'Active' },
          Environment: { Variables: { TABLE_NAME: { Ref: tableId } } },
        },
      });
      // And the stored data migration's isComplete function, which migrates the table at deploy.
      const migration = single(
        Object.keys(resourcesOfType(template, 'AWS::Lambda::Function')).filter((id) =>
          isLogicalIdOf('StoredDataMigrationComplete', id),
        ),
        'stored data migration function',
      );
      // Comparing id sets (not counts) names the offending function when one drifts.
      expect(Object.keys(conforming).sort()).toEqual([...serviceFunctionIds(template), migration].sort());
    });

    it('gives every route function the tenant base domain', () => {
      const functions = resourcesOfType<LambdaFunction>(template, 'AWS::Lambda::Function');
      for (const route of routes) {
        const variables = (
          functions[functionLogicalIdOf(template, route)]?.Properties as { Environment?: { Variables?: object } }
        ).Environment?.Variables;
        expect(variables, routeKey(route)).toMatchObject({ TENANT_BASE_DOMAIN });
      }
    });

    it('logs every function to its log group, which has a retention', () => {
      const logGroups = resourcesOfType<CfnResource<{ RetentionInDays?: number }>>(template, 'AWS::Logs::LogGroup');
      for (const id of Object.keys(resourcesOfType(template, 'AWS::Lambda::Function'))) {
        const fn = resourcesOfType<LambdaFunction>(template, 'AWS::Lambda::Function')[id];
        const logGroupId = fn?.Properties.LoggingConfig?.LogGroup?.Ref;
        expect(logGroupId, `log group of ${id}`).toEqual(expect.any(String));
        const retention = logGroups[logGroupId as string]?.Properties.RetentionInDays;
        expect(retention, `retention of ${logGroupId}`).toBeGreaterThan(0);
      }
    });

    it('lets each function write its own log group, and the functions sharing its role theirs: no other', () => {
      const functions = resourcesOfType<LambdaFunction>(template, 'AWS::Lambda::Function');
      const roles = resourcesOfType<CfnResource<{ ManagedPolicyArns?: unknown[] }>>(template, 'AWS::IAM::Role');
      const policies = Object.values(resourcesOfType<IamPolicy>(template, 'AWS::IAM::Policy'));
      const logActions = (statement: PolicyStatement) =>
        [statement.Action ?? []].flat().filter((action) => action.startsWith('logs:'));
      const executionRoles = new Set(serviceFunctionIds(template).map((id) => functions[id]?.Properties.Role['Fn::GetAtt'][0]));
      for (const roleId of Object.keys(roles)) {
        // Distinct: functions sharing a role may share a log group too (CDK's provider framework's isComplete and onTimeout).
        const ownGroupIds = new Set(
          Object.values(functions)
            .filter((fn) => fn.Properties.Role['Fn::GetAtt'][0] === roleId)
            .map((fn) => fn.Properties.LoggingConfig?.LogGroup?.Ref),
        );
        const ownGroups = [...ownGroupIds].map((logGroupId) => ({ 'Fn::GetAtt': [logGroupId, 'Arn'] }));
        const statements = policies
          .filter((policy) => policy.Properties.Roles.some((role) => (role as Ref).Ref === roleId))
          .flatMap((policy) => policy.Properties.PolicyDocument.Statement)
          .filter((statement) => logActions(statement).length > 0);
        if (ownGroups.length === 0) {
          expect(statements, `log statements of ${roleId}, a role of no function`).toEqual([]);
          continue;
        }
        if (executionRoles.has(roleId))
          expect(roles[roleId]?.Properties.ManagedPolicyArns, `managed policies of ${roleId}`).toBeUndefined();
        // One statement per nested stack the role's functions are in, each naming only log groups of the role's functions.
        for (const statement of statements)
          expect(logActions(statement).sort()).toEqual(['logs:CreateLogStream', 'logs:PutLogEvents']);
        const resources = statements.flatMap((statement) => [statement.Resource].flat());
        expect(resources).toEqual(expect.arrayContaining(ownGroups));
        expect(resources).toHaveLength(ownGroups.length);
      }
    });
  });

  describe('HTTP API', () => {
    it('invokes exactly the route functions, with one role of its own and no permission on any function', () => {
      const integrations = Object.values(resourcesOfType<HttpIntegration>(template, 'AWS::ApiGatewayV2::Integration'));
      expect(integrations).toHaveLength(routes.length + 1);
      const roleIds = new Set(
        integrations.map((integration) => JSON.stringify((integration.Properties as { CredentialsArn?: GetAtt }).CredentialsArn)),
      );
      const credentials = JSON.parse(single([...roleIds], 'integration role')) as GetAtt | undefined;
      expect(credentials?.['Fn::GetAtt'][1]).toBe('Arn');
      const roleId = credentials?.['Fn::GetAtt'][0] as string;
      template.hasResourceProperties('AWS::IAM::Role', {
        AssumeRolePolicyDocument: {
          Statement: [Match.objectLike({ Action: 'sts:AssumeRole', Principal: { Service: 'apigateway.amazonaws.com' } })],
        },
      });
      const policies = Object.values(
        template.findResources('AWS::IAM::ManagedPolicy', { Properties: { Roles: [{ Ref: roleId }] } }),
      ) as CfnResource<{ PolicyDocument: PolicyDocument }>[];
      const statements = policies.flatMap((policy) => policy.Properties.PolicyDocument.Statement);
      expect(statementsGrantedToRole(template, roleId)).toEqual([]); // nothing else: no inline or default policy
      for (const statement of statements) expect(statement).toMatchObject({ Effect: 'Allow', Action: 'lambda:InvokeFunction' });
      const invocable = statements.flatMap((statement) => asArray(statement.Resource));
      expect(invocable).toHaveLength(routes.length + 1);
      expect(invocable).toEqual(
        expect.arrayContaining([
          ...routes.map((route) => ({ Ref: aliasLogicalIdOf(template, functionLogicalIdOf(template, route)) })),
          { Ref: aliasLogicalIdOf(template, workerLogicalIdOf(template, unmatchedRoute)) },
        ]),
      );
    });

    it('sends what no route matches to the $default route, whose function answers 404 or 405', () => {
      template.hasResourceProperties('AWS::ApiGatewayV2::Route', { RouteKey: '$default' });
      const permissions = Object.values(resourcesOfType<CfnResource<{ Principal: string }>>(template, 'AWS::Lambda::Permission'));
      expect(permissions.filter((permission) => permission.Properties.Principal === 'apigateway.amazonaws.com')).toEqual([]);
    });

    it('has exactly the route keys of the route table, and $default for what none matches', () => {
      const keys = Object.values(resourcesOfType<HttpRoute>(template, 'AWS::ApiGatewayV2::Route')).map(
        (route) => route.Properties.RouteKey,
      );
      // Sorted lists rather than sets, so a duplicated route key fails too.
      expect(keys.sort()).toEqual([...routes.map(routeKey), unmatchedRoute.routeKey].sort());
    });

    it.each(routes.map((route) => [routeKey(route), route] as const))('integrates %s with its own function', (key, route) => {
      const apiRoute = single(
        Object.values(resourcesOfType<HttpRoute>(template, 'AWS::ApiGatewayV2::Route')).filter(
          (candidate) => candidate.Properties.RouteKey === key,
        ),
        `route ${key}`,
      );
      expect(functionTargetedByRoute(template, apiRoute)).toBe(functionLogicalIdOf(template, route));
    });
  });

  describe('table', () => {
    it('is keyed, billed, backed up, expiring and retained as the table definition says', () => {
      template.resourceCountIs('AWS::DynamoDB::Table', 1);
      // The local twin's CreateTable request: the stack's table must be the same table.
      const local = createTableInput('unused');
      template.hasResource('AWS::DynamoDB::Table', {
        DeletionPolicy: 'Retain',
        Properties: {
          KeySchema: local.KeySchema,
          BillingMode: local.BillingMode,
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          TimeToLiveSpecification: { AttributeName: tableDefinition.timeToLiveAttribute, Enabled: true },
          // A literal array: same indexes, same order, nothing extra.
          GlobalSecondaryIndexes: local.GlobalSecondaryIndexes,
        },
      });
      expect(local.KeySchema.map((key) => key.AttributeName)).toEqual(['pk', 'sk']);
      expect(tableDefinition.timeToLiveAttribute).toBe('expiresAt');
    });

    it('declares every key attribute, and only those, as a string', () => {
      const table = resourcesOfType<CfnResource<{ AttributeDefinitions: { AttributeName: string; AttributeType: string }[] }>>(
        template,
        'AWS::DynamoDB::Table',
      )[tableId];
      const localAttributes = createTableInput('unused').AttributeDefinitions;
      expect(table?.Properties.AttributeDefinitions).toEqual(expect.arrayContaining(localAttributes));
      expect(table?.Properties.AttributeDefinitions).toHaveLength(localAttributes.length);
      expect(localAttributes.every((attribute) => attribute.AttributeType === 'S')).toBe(true);
    });

    it('keeps deletion protection on unless the stage is ephemeral', () => {
      const protectionOf = (source: Template) =>
        single(
          Object.values(resourcesOfType<CfnResource<{ DeletionProtectionEnabled?: boolean }>>(source, 'AWS::DynamoDB::Table')),
          'table',
        ).Properties.DeletionProtectionEnabled ?? false;
      expect(protectionOf(template)).toBe(true);
      const ephemeral = new ServiceStack(testApp(), 'Ephemeral', {
        stage: 'test',
        ephemeral: true,
        tenantBaseDomain: TENANT_BASE_DOMAIN,
      });
      expect(protectionOf(wholeTemplate(ephemeral))).toBe(false);
      // A throwaway stage's releases shift all at once: nobody waits five minutes for a canary there.
      const configs = Object.values(
        resourcesOfType<CfnResource<{ DeploymentConfigName: string }>>(
          wholeTemplate(ephemeral),
          'AWS::CodeDeploy::DeploymentGroup',
        ),
      ).map((group) => group.Properties.DeploymentConfigName);
      expect(new Set(configs)).toEqual(new Set(['CodeDeployDefault.LambdaAllAtOnce']));
    });
  });

  describe('least privilege', () => {
    const routesWith = (access: Route['table']) => routes.filter((route) => route.table === access);
    const routeCases = (access: Route['table']) => routesWith(access).map((route) => [routeKey(route), route] as const);

    it('covers every kind of table access the route table uses', () => {
      // Guards the it.each blocks below against silently running zero cases.
      for (const access of ['none', 'read', 'readWrite'] as const) expect(routesWith(access).length).toBeGreaterThan(0);
    });

    it.each(routeCases('read'))("lets %s read the table, and write nothing but its token's use stamps", (_key, route) => {
      const statements = statementsOfFunction(template, route);
      expect(allowedDynamoDbActions(statements)).toEqual(
        expect.arrayContaining(lowerCased(['dynamodb:GetItem', 'dynamodb:Query'])),
      );
      const writing = dynamoDbStatements(statements).filter((statement) =>
        asArray(statement.Action).some((action) => isWriteOrWildcard(action.toLowerCase())),
      );
      // The stamps (functions/core/auth/token-use.ts): UpdateItems of their attributes alone, in their partitions
      // alone, answering nothing.
      const stamps = Object.values(tokenUseGrants).map(({ attributes, partitions }) =>
        expect.objectContaining({
          Effect: 'Allow',
          Action: 'dynamodb:UpdateItem',
          Condition: {
            'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...attributes] },
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': partitions.map((prefix) => `${prefix}*`) },
            Null: { 'dynamodb:Attributes': 'false', 'dynamodb:LeadingKeys': 'false' },
            StringEqualsIfExists: { 'dynamodb:ReturnValues': 'NONE' },
          },
        }),
      );
      expect(writing).toEqual(route.auth.length > 0 ? stamps : []);
    });

    it.each(routeCases('readWrite'))('lets %s read and write the table', (_key, route) => {
      const actions = allowedDynamoDbActions(statementsOfFunction(template, route));
      expect(actions).toEqual(
        expect.arrayContaining(
          lowerCased(['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']),
        ),
      );
      // Even read-write routes get named actions, not a wildcard.
      expect(actions.filter((action) => action.includes('*'))).toEqual([]);
    });

    it.each(routes.map((route) => [routeKey(route), route] as const))(
      'never lets %s Scan: one Scan would read every tenant of the single table',
      (_key, route) => {
        expect(allowedDynamoDbActions(statementsOfFunction(template, route))).not.toContain('dynamodb:scan');
      },
    );

    it.each(routeCases('none'))('gives %s no DynamoDB access at all', (_key, route) => {
      expect(allowedDynamoDbActions(statementsOfFunction(template, route))).toEqual([]);
    });

    it.each(routes.map((route) => [routeKey(route), route] as const))(
      'scopes the DynamoDB grants of %s to the table and its indexes',
      (_key, route) => {
        const tableArn = { 'Fn::GetAtt': [tableId, 'Arn'] };
        const tableAndIndexArns = [tableArn, { 'Fn::Join': ['', [tableArn, '/index/*']] }];
        const statements = statementsOfFunction(template, route);
        // NotAction / NotResource would grant everything not listed, which the checks above cannot see.
        expect(
          statements.filter((statement) => statement.NotAction !== undefined || statement.NotResource !== undefined),
        ).toEqual([]);
        for (const statement of dynamoDbStatements(statements)) {
          const resources = asArray(statement.Resource);
          expect(resources.length).toBeGreaterThan(0);
          for (const resource of resources) expect(tableAndIndexArns).toContainEqual(resource);
        }
      },
    );
  });
});

describe('ServiceStack queues', () => {
  let template: Template;
  const queues = () => resourcesOfType<CfnResource<Record<string, unknown>>>(template, 'AWS::SQS::Queue');
  const queueIdOf = (constructId: string) =>
    single(
      Object.keys(queues()).filter((id) => isLogicalIdOf(constructId, id)),
      constructId,
    );

  beforeAll(() => {
    template = synthesizeTemplate('test');
  });

  it.each(Object.entries(queueDefinitions))(
    'makes the %s queue as defined: FIFO or standard, encrypted, TLS only, redriven to its DLQ',
    (name, definition) => {
      const id = `${name[0]?.toUpperCase()}${name.slice(1)}`;
      const queue = queues()[queueIdOf(`${id}Queue`)];
      const deadLetterId = queueIdOf(`${id}DeadLetterQueue`);
      expect(queue?.Properties.FifoQueue).toBe(definition.fifo ? true : undefined);
      expect(queue?.Properties).toMatchObject({
        VisibilityTimeout: definition.visibilityTimeoutSeconds,
        SqsManagedSseEnabled: true,
        RedrivePolicy: {
          deadLetterTargetArn: { 'Fn::GetAtt': [deadLetterId, 'Arn'] },
          maxReceiveCount: definition.maxReceiveCount,
        },
      });
      expect(queues()[deadLetterId]?.Properties).toMatchObject({ SqsManagedSseEnabled: true });
      expect(queues()[deadLetterId]?.Properties.FifoQueue).toBe(definition.fifo ? true : undefined);
      // enforceSSL: a queue policy denies any request without TLS.
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        PolicyDocument: Match.objectLike({
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        }),
        Queues: [{ Ref: deadLetterId }],
      });
      // An alarm fires as soon as one message waits in the DLQ.
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Namespace: 'AWS/SQS',
        Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [deadLetterId, 'QueueName'] } }],
        Threshold: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
    },
  );

  it("states every queue's and DLQ's message size limit: sqsMessageBytes, the one the twin's queues apply", () => {
    const all = Object.values(queues());
    // Each definition's queue and its DLQ.
    expect(all).toHaveLength(2 * Object.keys(queueDefinitions).length);
    for (const queue of all) expect(queue.Properties.MaximumMessageSize).toBe(sqsMessageBytes);
  });

  it.each(queueConsumers.map((consumer) => [consumer.handler, consumer] as const))(
    'feeds %s from its queue with partial batch responses',
    (_name, consumer) => {
      const id = `${consumer.queue[0]?.toUpperCase()}${consumer.queue.slice(1)}Queue`;
      const mappings = Object.values(
        template.findResources('AWS::Lambda::EventSourceMapping', {
          Properties: {
            EventSourceArn: { 'Fn::GetAtt': [queueIdOf(id), 'Arn'] },
            BatchSize: consumer.batchSize,
            FunctionResponseTypes: ['ReportBatchItemFailures'],
          },
        }),
      ) as CfnResource<{ FunctionName: unknown }>[];
      // The function's name with the alias's (`<name>:live`): the mapping feeds the live alias.
      const mapping = single(mappings, `event source of ${consumer.handler}`);
      expect(refersTo(mapping.Properties.FunctionName, aliasLogicalIdOf(template, workerLogicalIdOf(template, consumer)))).toBe(
        true,
      );
      expect(JSON.stringify(mapping.Properties.FunctionName)).toContain(`":${LIVE_ALIAS}"`);
    },
  );

  it.each([...queueConsumers, ...timedFunctions].map((worker) => [worker.handler, worker] as const))(
    "gives %s its row's timeout; a queue hides a message at least six times that long, as AWS advises",
    (_name, worker) => {
      const fn = resourcesOfType<LambdaFunction>(template, 'AWS::Lambda::Function')[workerLogicalIdOf(template, worker)];
      expect((fn?.Properties as { Timeout?: number }).Timeout).toBe(worker.timeoutSeconds);
      if ('queue' in worker) {
        expect(queueDefinitions[worker.queue].visibilityTimeoutSeconds).toBeGreaterThanOrEqual(6 * worker.timeoutSeconds);
      }
    },
  );

  it.each(timedFunctions.map((timed) => [timed.handler, timed] as const))(
    'runs %s from an EventBridge rule at every minute boundary, never retried, with exactly its table access and queues',
    (_name, timed) => {
      const functionId = workerLogicalIdOf(template, timed);
      const aliasId = aliasLogicalIdOf(template, functionId);
      expect(timed.everyMinutes).toBe(1);
      template.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression: 'cron(* * * * ? *)',
        State: 'ENABLED',
        Targets: [
          Match.objectLike({
            Arn: { Ref: aliasId },
            RetryPolicy: { MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 },
          }),
        ],
      });
      template.hasResourceProperties('AWS::Lambda::Permission', {
        Action: 'lambda:InvokeFunction',
        FunctionName: { Ref: aliasId },
        Principal: 'events.amazonaws.com',
      });
      // Lambda's own asynchronous retries are off too: a failed tick never runs beside the next one.
      const invokeConfig = single(
        Object.values(
          template.findResources('AWS::Lambda::EventInvokeConfig', {
            Properties: { FunctionName: { Ref: functionId }, MaximumRetryAttempts: 0, MaximumEventAgeInSeconds: 60 },
          }),
        ) as CfnResource<{ Qualifier: unknown }>[],
        `asynchronous invocation settings of ${timed.handler}`,
      );
      expect(refersTo(invokeConfig.Properties.Qualifier, aliasId)).toBe(true);
      const fn = resourcesOfType<LambdaFunction>(template, 'AWS::Lambda::Function')[functionId];
      const statements = statementsGrantedToRole(template, fn?.Properties.Role['Fn::GetAtt'][0] as string);
      expect(allowedDynamoDbActions(statements).sort()).toEqual(lowerCased(tableActions[timed.table]).sort());
      const sendTargets = statements
        .filter((statement) => asArray(statement.Action).some((action) => action.toLowerCase() === 'sqs:sendmessage'))
        .flatMap((statement) => asArray(statement.Resource));
      expect(sendTargets).toEqual(
        (timed.sends ?? []).map((name) => ({
          'Fn::GetAtt': [queueIdOf(`${name[0]?.toUpperCase()}${name.slice(1)}Queue`), 'Arn'],
        })),
      );
    },
  );

  it('invokes functions asynchronously with EventBridge scheduled events alone, far under lambdaAsyncPayloadBytes', () => {
    type Rule = CfnResource<{ ScheduleExpression?: string; EventPattern?: unknown; Targets: Record<string, unknown>[] }>;
    // The timers' rules; the others match CloudTrail events and target a topic, no function.
    const rules = Object.values(resourcesOfType<Rule>(template, 'AWS::Events::Rule')).filter(
      (rule) => rule.Properties.ScheduleExpression !== undefined,
    );
    expect(rules).toHaveLength(timedFunctions.length);
    const functionTargets = Object.values(resourcesOfType<Rule>(template, 'AWS::Events::Rule'))
      .filter((rule) => rule.Properties.ScheduleExpression === undefined)
      .flatMap((rule) => rule.Properties.Targets)
      .filter((target) => JSON.stringify(target.Arn).includes('Live'));
    expect(functionTargets).toEqual([]);
    for (const rule of rules) {
      // A schedule, not a pattern, and its targets get the event as EventBridge makes it (no Input,
      // InputPath or InputTransformer): the fixed Scheduled Event of a few hundred bytes. No function
      // of ours invokes another (@aws-sdk/client-lambda is not even a dependency).
      expect(rule.Properties.ScheduleExpression).toMatch(/^(rate|cron)\(/);
      expect(rule.Properties.EventPattern).toBeUndefined();
      for (const target of rule.Properties.Targets) {
        expect(Object.keys(target).filter((key) => key.startsWith('Input'))).toEqual([]);
      }
    }
    const scheduledEvent = {
      version: '0',
      id: randomUUID(),
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '123456789012',
      time: new Date().toISOString(),
      region: 'sa-east-1',
      resources: [`arn:aws:events:sa-east-1:123456789012:rule/${'x'.repeat(64)}`],
      detail: {},
    };
    expect(Buffer.byteLength(JSON.stringify(scheduledEvent))).toBeLessThan(lambdaAsyncPayloadBytes / 1000);
  });

  it('keeps webhook bodies in a private, encrypted, TLS-only bucket that expires what is left', () => {
    const buckets = resourcesOfType<CfnResource>(template, 'AWS::S3::Bucket');
    const [bucketId, bucket] = single(Object.entries(buckets), 'bucket');
    expect(bucket.Properties).toMatchObject({
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LifecycleConfiguration: { Rules: [expect.objectContaining({ ExpirationInDays: 31, Status: 'Enabled' })] },
    });
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: Match.objectLike({
        Statement: Match.arrayWith([
          Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
        ]),
      }),
    });
    // Exactly the functions that declare payload access may touch the bucket.
    const functions = resourcesOfType<LambdaFunction>(template, 'AWS::Lambda::Function');
    const bucketArn = JSON.stringify({ 'Fn::GetAtt': [bucketId, 'Arn'] });
    const workers = [...queueConsumers, ...timedFunctions] as ReadonlyArray<{ handler: string; payloads?: string }>;
    const cases = [
      ...routes.map((route) => ({ name: routeKey(route), id: functionLogicalIdOf(template, route), payloads: route.payloads })),
      ...workers.map((worker) => ({ name: worker.handler, id: workerLogicalIdOf(template, worker), payloads: worker.payloads })),
    ];
    for (const { name, id, payloads } of cases) {
      const fn = functions[id];
      const statements = statementsGrantedToRole(template, fn?.Properties.Role['Fn::GetAtt'][0] as string);
      const s3Actions = statements
        .filter((statement) => JSON.stringify(statement.Resource ?? '').includes(bucketArn))
        .flatMap((statement) => asArray(statement.Action));
      const canWrite = s3Actions.some((action) => /^s3:(PutObject|DeleteObject)/.test(action));
      const canRead = s3Actions.some((action) => action.startsWith('s3:GetObject'));
      expect({ name, canRead, canWrite }).toEqual({ name, canRead: payloads !== undefined, canWrite: payloads === 'readWrite' });
      const variables =
        (fn?.Properties as { Environment?: { Variables?: Record<string, unknown> } }).Environment?.Variables ?? {};
      expect(variables.PAYLOAD_BUCKET !== undefined, `${name} knows the bucket`).toBe(payloads !== undefined);
    }
  });

  it('lets the webhook deliverer move a message to its DLQ after the last attempt, and no other function', () => {
    const functions = resourcesOfType<LambdaFunction>(template, 'AWS::Lambda::Function');
    const deadLetterArn = JSON.stringify({ 'Fn::GetAtt': [queueIdOf('WebhookDeadLetterQueue'), 'Arn'] });
    const senders = Object.entries(functions)
      .filter(([, fn]) =>
        statementsGrantedToRole(template, fn.Properties.Role['Fn::GetAtt'][0])
          .filter((statement) => asArray(statement.Action).some((action) => action.toLowerCase() === 'sqs:sendmessage'))
          .some((statement) => JSON.stringify(statement.Resource).includes(deadLetterArn)),
      )
      .map(([id]) => id);
    expect(senders).toEqual([workerLogicalIdOf(template, { handler: 'webhook-deliverer' })]);
  });

  it('lets exactly the routes that send to a queue send to it, and nothing else send at all', () => {
    const functions = resourcesOfType<LambdaFunction>(template, 'AWS::Lambda::Function');
    for (const route of routes) {
      const fn = functions[functionLogicalIdOf(template, route)];
      const roleId = fn?.Properties.Role['Fn::GetAtt'][0] as string;
      const sendStatements = statementsGrantedToRole(template, roleId).filter((statement) =>
        asArray(statement.Action).some((action) => action.toLowerCase() === 'sqs:sendmessage'),
      );
      const sends = route.sends ?? [];
      expect(sendStatements.length > 0, `${routeKey(route)} may send`).toBe(sends.length > 0);
      for (const statement of sendStatements) {
        const targets = asArray(statement.Resource).map((resource) => JSON.stringify(resource));
        const allowed = sends.map((name) =>
          JSON.stringify({ 'Fn::GetAtt': [queueIdOf(`${name[0]?.toUpperCase()}${name.slice(1)}Queue`), 'Arn'] }),
        );
        expect(
          targets.every((target) => allowed.includes(target)),
          `${routeKey(route)} sends only to its queues`,
        ).toBe(true);
      }
      const variables =
        (fn?.Properties as { Environment?: { Variables?: Record<string, unknown> } }).Environment?.Variables ?? {};
      for (const name of sends)
        expect(variables[queueUrlVariable(name)], `${routeKey(route)} knows the ${name} queue`).toBeDefined();
    }
  });
});

describe('ServiceStack signing keys', () => {
  /**
   * The two keyrings, each in a secret exactly the routes that need it may read: the login-token keys
   * (the routes signing or verifying login tokens) and the bearer token keys (every route that takes a
   * token checks its signature, and some mint tokens).
   */
  const keyrings = [
    {
      name: 'login-token keyring',
      prefix: 'SigningKeys',
      variable: 'SIGNING_KEYS_SECRET_ARN',
      reads: (route: Route) => Boolean(route.signingKeys),
    },
    {
      name: 'token keyring',
      prefix: 'TokenKeys',
      variable: 'TOKEN_KEYS_SECRET_ARN',
      reads: (route: Route) => route.auth.length > 0,
    },
  ];

  it('keeps each keyring in a secret that exactly the routes signing or verifying its tokens may read', () => {
    const template = synthesizeTemplate('test');
    const secrets = Object.keys(resourcesOfType(template, 'AWS::SecretsManager::Secret'));
    expect(secrets).toHaveLength(keyrings.length);
    const functions = resourcesOfType<LambdaFunction>(template, 'AWS::Lambda::Function');
    for (const keyring of keyrings) {
      const secretId = single(
        secrets.filter((id) => id.startsWith(keyring.prefix)),
        keyring.name,
      );
      for (const route of routes) {
        const fn = functions[functionLogicalIdOf(template, route)];
        const roleId = fn?.Properties.Role['Fn::GetAtt'][0] as string;
        const reads = statementsGrantedToRole(template, roleId).filter(
          (statement) =>
            asArray(statement.Action).some((action) => action.toLowerCase() === 'secretsmanager:getsecretvalue') &&
            JSON.stringify(statement.Resource) === JSON.stringify({ Ref: secretId }),
        );
        expect(reads.length > 0, `${routeKey(route)} may read the ${keyring.name}`).toBe(keyring.reads(route));
        const variables =
          (fn?.Properties as { Environment?: { Variables?: Record<string, unknown> } }).Environment?.Variables ?? {};
        expect(variables[keyring.variable], routeKey(route)).toEqual(keyring.reads(route) ? { Ref: secretId } : undefined);
      }
    }
    // No role reads a secret it was not given.
    for (const [roleId] of Object.entries(resourcesOfType(template, 'AWS::IAM::Role')))
      for (const statement of statementsGrantedToRole(template, roleId))
        if (asArray(statement.Action).some((action) => action.toLowerCase().startsWith('secretsmanager:')))
          expect(secrets.map((id) => JSON.stringify({ Ref: id }))).toContain(JSON.stringify(statement.Resource));
  });

  it('answers on every tenant domain when given a wildcard certificate', () => {
    const app = testApp();
    const stack = new ServiceStack(app, 'WithDomains', {
      stage: 'test',
      tenantBaseDomain: TENANT_BASE_DOMAIN,
      tenantCertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc',
    });
    const template = wholeTemplate(stack);
    template.hasResourceProperties('AWS::ApiGatewayV2::DomainName', { DomainName: `*.${TENANT_BASE_DOMAIN}` });
    template.resourceCountIs('AWS::ApiGatewayV2::ApiMapping', 1);
    synthesizeTemplate('test').resourceCountIs('AWS::ApiGatewayV2::DomainName', 0);
  });
});

/** What runs a bundled handler in a fresh Node.js process (the bundle stands alone: no node_modules above it) with one event. */
const bundleRun = (code: string, event: unknown) => [
  '--input-type=module',
  '-e',
  `const { handler } = await import(${JSON.stringify(pathToFileURL(code).href)});
   const answer = await handler(${JSON.stringify(event)}, { awsRequestId: 'bundle-test', getRemainingTimeInMillis: () => 15000 });
   const body = answer.isBase64Encoded ? Buffer.from(answer.body, 'base64').toString('utf8') : answer.body;
   process.stdout.write(JSON.stringify({ statusCode: answer.statusCode, body }));`,
];

function invokeBundle(code: string, event: unknown, environment: NodeJS.ProcessEnv): { statusCode: number; body: string } {
  const output = execFileSync(process.execPath, bundleRun(code, event), {
    env: environment,
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return JSON.parse(output.toString()) as { statusCode: number; body: string };
}

/** The same, without blocking this process: for a bundle that talks to a server this test runs. */
async function invokeBundleAsync(code: string, event: unknown, environment: NodeJS.ProcessEnv) {
  const { stdout } = await promisify(execFile)(process.execPath, bundleRun(code, event), { env: environment, timeout: 60_000 });
  return JSON.parse(stdout) as { statusCode: number; body: string };
}

describe('ServiceStack bundling', () => {
  let outdir: string;
  let bundledTemplate: Template;
  let functions: Record<string, LambdaFunction>;
  /** index.mjs of the route's bundled function. */
  const codeOf = (route: Route) => {
    const id = Object.keys(functions).find((logicalId) => logicalId.startsWith(functionIdOf(route)));
    return join(outdir, functions[id ?? '']?.Metadata?.[ASSET_RESOURCE_METADATA_PATH_KEY] as string, 'index.mjs');
  };
  const routeOf = (handler: string) =>
    single(
      routes.filter((route) => route.handler === handler),
      `${handler} route`,
    );

  beforeAll(() => {
    // Asset metadata is what the CLI turns on; without it the function has no 'aws:asset:path'.
    const app = testApp({ [ASSET_RESOURCE_METADATA_ENABLED_CONTEXT]: true }, { bundle: true });
    outdir = app.outdir;
    const stack = new ServiceStack(app, 'Test', { stage: 'test', tenantBaseDomain: TENANT_BASE_DOMAIN });
    bundledTemplate = wholeTemplate(stack);
    functions = Object.fromEntries(
      serviceFunctionIds(bundledTemplate).map((id) => [id, bundledTemplate.toJSON().Resources[id]]),
    ) as Record<string, LambdaFunction>;
    // A guard against a hang: bundling every function (one esbuild run, about 5 s alone) takes longer beside the other files' work.
  }, 300_000);
  // The one assembly with every function's code (about 200 MB): gone with this file, not kept to the run's end.
  afterAll(() => rmSync(outdir, { recursive: true, force: true }));

  it('bundles every function as minified ESM with a source map', () => {
    expect(Object.keys(functions)).toHaveLength(routes.length + 1 + queueConsumers.length + timedFunctions.length);
    for (const [id, fn] of Object.entries(functions)) {
      const assetPath = fn.Metadata?.[ASSET_RESOURCE_METADATA_PATH_KEY];
      expect(assetPath, `asset path of ${id}`).toEqual(expect.any(String));
      const code = join(outdir, assetPath as string, 'index.mjs');
      expect(existsSync(code), `${code} exists`).toBe(true);
      expect(existsSync(`${code}.map`), `${code}.map exists`).toBe(true);

      const source = readFileSync(code, 'utf8');
      // Unminified esbuild output averages ~40 characters a line; minified runs to thousands.
      const averageLineLength = statSync(code).size / source.split('\n').length;
      expect(averageLineLength, `average line length of ${code}`).toBeGreaterThan(500);
      // The banner comes first, proving the ESM build with createRequire for CommonJS dependencies.
      const banner = "import{createRequire}from'node:module';";
      expect(source.slice(0, banner.length), `start of ${code}`).toBe(banner);
      expect(source.trimEnd().slice(-60), `end of ${code}`).toContain('//# sourceMappingURL=index.mjs.map');
      const sourceMap = JSON.parse(readFileSync(`${code}.map`, 'utf8')) as { sources?: string[] };
      expect(sourceMap.sources?.length ?? 0).toBeGreaterThan(0);
      // The SDK's default credential chain is replaced by functions/core/lambda-credentials.ts.
      expect(source, `${code} holds no web-identity credential provider`).not.toContain('AWS_WEB_IDENTITY_TOKEN_FILE');
      // Functions read their route's run-time facts, not the table: no summary in a bundle but the API description's.
      if (!id.startsWith(functionIdOf(routeOf('openapi')))) {
        for (const route of routes) expect(source, `${id} holds the summary of ${routeKey(route)}`).not.toContain(route.summary);
      }
    }
  });

  it("gives each function the bundle of its own handler, whether built with the route table's others or alone", () => {
    // The route table's functions come out of one esbuild run (lib/function-bundles.ts); a function given another's
    // output would still load. Its source map names the files it was built from.
    const sourcesOf = (logicalId: string) => {
      const fn = resourcesOfType<LambdaFunction>(bundledTemplate, 'AWS::Lambda::Function')[logicalId];
      const code = join(outdir, fn?.Metadata?.[ASSET_RESOURCE_METADATA_PATH_KEY] as string, 'index.mjs');
      return (JSON.parse(readFileSync(`${code}.map`, 'utf8')) as { sources: string[] }).sources;
    };
    const rows: [string, string][] = [
      ...routes.map((route): [string, string] => [functionLogicalIdOf(bundledTemplate, route), routeEntry(route.handler)]),
      [workerLogicalIdOf(bundledTemplate, unmatchedRoute), routeEntry(unmatchedRoute.handler)],
      ...[...queueConsumers, ...timedFunctions].map((worker): [string, string] => [
        workerLogicalIdOf(bundledTemplate, worker),
        workerEntry(worker.handler),
      ]),
    ];
    const entries = rows.map(([, entry]) => entry);
    for (const [logicalId, entry] of rows) {
      const handlerFiles = sourcesOf(logicalId).filter((source) => entries.some((other) => source.endsWith(`/${other}`)));
      expect(handlerFiles, `the handler files ${logicalId} was built from`).toEqual([expect.stringMatching(`/${entry}$`)]);
    }
    // Ours that are not rows of the route table (the deployment's own) are built alone, each from its own file.
    const others = Object.entries(resourcesOfType<LambdaFunction>(bundledTemplate, 'AWS::Lambda::Function'))
      .filter(([id, fn]) => fn.Properties.Handler === 'index.handler' && !rows.some(([row]) => row === id))
      .map(([id]) => id);
    expect(others.length, 'functions of the deployment').toBeGreaterThan(0);
    for (const logicalId of others) {
      const ownFiles = sourcesOf(logicalId).filter((source) => /\/functions\/(deploy|edge)\/[^/]+\.ts$/.test(source));
      expect(ownFiles, `the handler files ${logicalId} was built from`).toHaveLength(1);
    }
  });

  it('keeps every function under the bundle budget of bench/bundles.ts, with room to grow', () => {
    // The budget is what the bench reports against; the test keeps a tenth of it free, so that a change that
    // brings a bundle near it is seen here, before a release, and not in the next bench run.
    for (const [id, fn] of Object.entries(functions)) {
      const { size } = statSync(join(outdir, fn.Metadata?.[ASSET_RESOURCE_METADATA_PATH_KEY] as string, 'index.mjs'));
      expect(size, `${id}'s index.mjs`).toBeLessThan(0.9 * bundleBudgetBytes);
    }
  });

  it.each(routes.filter((route) => route.packageFiles?.length).map((route) => [routeKey(route), route] as const))(
    'ships the package files of %s beside the code, and the bundled function serves them from there',
    (_key, route) => {
      const code = codeOf(route);
      for (const file of route.packageFiles ?? []) {
        expect(statSync(join(code, '..', basename(file))).size, `${file} beside the code`).toBeGreaterThan(1000);
      }
      expect(statSync(code).size, 'the code itself, without them').toBeLessThan(100 * 1024);
      // The first file each serves, as its route names it, read from beside the bundle.
      const [path, expected] =
        route.handler === 'openapi' ? [{}, '"openapi":"3.1'] : [{ pathParameters: { asset: 'swagger-ui.css' } }, '.swagger-ui'];
      const answer = invokeBundle(code, { ...path, headers: {}, requestContext: { requestId: 'r' } }, process.env);
      expect(answer.statusCode).toBe(200);
      expect(answer.body).toContain(expected);
    },
  );

  it('answers from the real table with the credentials Lambda puts in the environment, and none without them', () => {
    const whoami = routeOf('whoami');
    const event = {
      version: '2.0',
      routeKey: routeKey(whoami),
      rawPath: whoami.path,
      rawQueryString: '',
      headers: { authorization: `Bearer ${inject('localClientToken')}` },
      requestContext: { requestId: 'bundle-test', routeKey: routeKey(whoami), http: { method: 'GET', path: whoami.path } },
      isBase64Encoded: false,
    };
    const answer = invokeBundle(codeOf(whoami), event, process.env);
    expect(answer.statusCode).toBe(200);
    expect(JSON.parse(answer.body)).toMatchObject({ status: 'success', data: { kind: 'client' } });

    // Without them the function has nowhere else to look (no profile, no metadata service): an error, not a hang.
    const { AWS_ACCESS_KEY_ID: _key, AWS_SECRET_ACCESS_KEY: _secret, ...withoutCredentials } = process.env;
    const refused = invokeBundle(codeOf(whoami), event, withoutCredentials);
    expect(refused.statusCode).toBe(500);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'internal_error' });
  });
  it('reads YAML bodies with the ES module build of the YAML library it bundles', () => {
    const publish = routeOf('publish-template');
    const yamlRequest = (body: string) => ({
      version: '2.0',
      routeKey: routeKey(publish),
      rawPath: publish.path,
      rawQueryString: '',
      headers: { authorization: `Bearer ${inject('localClientToken')}`, 'content-type': 'application/yaml' },
      requestContext: { requestId: 'bundle-test', routeKey: routeKey(publish), http: { method: 'POST', path: publish.path } },
      body,
      isBase64Encoded: false,
    });
    const code = codeOf(publish);
    const duplicateKeys = invokeBundle(code, yamlRequest('name: a\nname: b\n'), process.env);
    expect(duplicateKeys.statusCode).toBe(400);
    expect(JSON.parse(duplicateKeys.body)).toMatchObject({ code: 'malformed_yaml' });
    // Parsed, then refused by the schema (nothing is written): the parser itself works in the bundle.
    const parsed = invokeBundle(code, yamlRequest('name: [1, 2]\n'), process.env);
    expect(parsed.statusCode).toBe(400);
    expect(JSON.parse(parsed.body)).toMatchObject({ code: 'validation_failed' });
  });

  it("sends every message of the fair queues in its tenant's (or its client's) message group: the bundled senders, as SQS receives them", async () => {
    const fairQueues = Object.entries(queueDefinitions).filter(([, definition]) => definition.fair);
    expect(fairQueues.map(([name]) => name).sort()).toEqual(['fire', 'rollout', 'webhook']);
    const sqs = new SQSClient({ endpoint: inject('sqsEndpoint') });
    const dynamo = new DynamoDBClient({ endpoint: inject('dynamodbEndpoint') });
    const probes: string[] = [];
    /** A queue of the test's own, in place of one the bundle sends to. */
    const probe = async () => {
      const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `group-probe-${randomUUID()}` }));
      probes.push(QueueUrl as string);
      return QueueUrl as string;
    };
    // fauxqs keeps no MessageGroupId on a standard queue: the requests are read on their way to it.
    const requests: Array<{ QueueUrl?: string; MessageGroupId?: string; Entries?: Array<{ MessageGroupId?: string }> }> = [];
    const upstream = new URL(inject('sqsEndpoint'));
    const proxy = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        requests.push(JSON.parse(body.toString('utf8') || '{}') as (typeof requests)[number]);
        const forwarded = httpRequest(
          { host: upstream.hostname, port: upstream.port, path: request.url, method: request.method, headers: request.headers },
          (answer) => {
            response.writeHead(answer.statusCode ?? 500, answer.headers);
            answer.pipe(response);
          },
        );
        forwarded.on('error', () => response.writeHead(502).end());
        forwarded.end(body);
      });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const sqsEndpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    const groupsSentTo = (queueUrl: string) =>
      requests
        .filter((request) => request.QueueUrl === queueUrl)
        .flatMap((request) =>
          request.Entries ? request.Entries.map((entry) => entry.MessageGroupId) : [request.MessageGroupId],
        );
    const workerCode = (handler: string) => {
      const id = Object.keys(functions).find((logicalId) => logicalId.startsWith(consumerIdOf(handler)));
      return join(outdir, functions[id ?? '']?.Metadata?.[ASSET_RESOURCE_METADATA_PATH_KEY] as string, 'index.mjs');
    };
    const table = `group-probe-${randomUUID()}`;
    try {
      // The webhook queue: a delivery queued by the bundled force-send route.
      const tenant = await newTenant((await newClient()).token);
      const settings = { alertChannels: { webhook: { url: 'https://hooks.example.com/k' } } };
      expect((await api('PATCH', '/tenant/settings', { token: tenant.token, body: settings })).status).toBe(200);
      const alert = await api('POST', '/tenant/alerts', {
        token: tenant.token,
        body: { nome: 'Stock low', channels: { webhook: true }, content: [] },
      });
      const send = routeOf('send-alert');
      const webhookQueue = await probe();
      const sent = await invokeBundleAsync(
        codeOf(send),
        {
          version: '2.0',
          routeKey: routeKey(send),
          rawPath: `/tenant/alerts/${alert.body.data.id}/send`,
          rawQueryString: '',
          pathParameters: { id: String(alert.body.data.id) },
          headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
          requestContext: { requestId: 'bundle-test', routeKey: routeKey(send), http: { method: 'POST', path: send.path } },
          body: JSON.stringify({ user: { id: 7 } }),
          isBase64Encoded: false,
        },
        { ...process.env, SQS_ENDPOINT: sqsEndpoint, [queueUrlVariable('webhook')]: webhookQueue },
      );
      expect(sent.statusCode).toBe(202);
      expect(groupsSentTo(webhookQueue)).toEqual([tenantGroup(tenant.id)]);

      // The fire queue: a tick of the bundled dispatcher, over a table of its own holding one due schedule.
      await ensureTable(dynamo, table);
      const due = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 60_000).toISOString();
      const schedule = scheduleItem({
        tenantId: 41,
        scheduleId: 1,
        version: 1,
        minuteTriggers: false,
        nextFireAt: due,
        file: {
          header: { id: 1 },
          body: { nome: 'Due', ativo: true, timezone: 'UTC', flows: [], triggers: [{ type: 'Day', start_when: '08:00' }] },
        },
      });
      await DynamoDBDocumentClient.from(dynamo).send(new PutCommand({ TableName: table, Item: schedule }));
      const fireQueue = await probe();
      await invokeBundleAsync(
        workerCode('schedule-dispatcher'),
        {},
        { ...process.env, SQS_ENDPOINT: sqsEndpoint, TABLE_NAME: table, [queueUrlVariable('fire')]: fireQueue },
      );
      expect(groupsSentTo(fireQueue)).toEqual([tenantGroup(41)]);

      // The rollout queue: a rollout's first step, queued by the bundled route that starts it, in its client's group.
      const integrator = await newClient();
      const templateId = await publish(integrator.token, retailBundle());
      await newTenant(integrator.token, { templateId });
      const start = routeOf('start-rollout');
      const rolloutQueue = await probe();
      const started = await invokeBundleAsync(
        codeOf(start),
        {
          version: '2.0',
          routeKey: routeKey(start),
          rawPath: `/tenants/templates/${templateId}/rollouts`,
          rawQueryString: '',
          pathParameters: { id: String(templateId) },
          headers: { authorization: `Bearer ${integrator.token}`, 'content-type': 'application/json' },
          requestContext: { requestId: 'bundle-test', routeKey: routeKey(start), http: { method: 'POST', path: start.path } },
          body: JSON.stringify({ tenants: 'all' }),
          isBase64Encoded: false,
        },
        { ...process.env, SQS_ENDPOINT: sqsEndpoint, [queueUrlVariable('rollout')]: rolloutQueue },
      );
      expect(started.statusCode).toBe(202);
      expect(groupsSentTo(rolloutQueue)).toEqual([clientGroup(integrator.clientId)]);
    } finally {
      proxy.close();
      for (const queueUrl of probes) await sqs.send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
      await dynamo.send(new DeleteTableCommand({ TableName: table })).catch(() => undefined);
      sqs.destroy();
      dynamo.destroy();
    }
  });
});
