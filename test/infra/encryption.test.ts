/**
 * Secrets at rest: the table is encrypted under a customer managed key that rotates and outlives the
 * stack, whose policy names everyone who may do anything with it: its administrators (the stage's key
 * administrator and the CloudFormation role that deploys it), DynamoDB, and those DynamoDB and AWS Backup
 * use it for, only through those services. The account root is not among them.
 */
import type { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { tableActions, tableKeyActions } from '#lib/function-roles.ts';
import { keyAdministrationActions, tableOperationKeyActions } from '#lib/service-table.ts';
import { productionStage, synthesizeProduction } from '../support/stages.ts';

interface Statement {
  Sid?: string;
  Effect: string;
  Principal: { AWS?: unknown; Service?: unknown };
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
}
interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
}

const asArray = <T>(value: T | T[]): T[] => (Array.isArray(value) ? value : [value]);
const resourcesOf = (template: Template) => (template.toJSON() as { Resources: Record<string, Resource> }).Resources;
const statementsOf = (document: unknown) => (document as { Statement: Statement[] }).Statement;
const arnOf = (logicalId: string) => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });

/** The role CloudFormation deploys with: the CDK bootstrap's execution role of the stage's account and region. */
const deployingRole = {
  'Fn::Sub': 'arn:${AWS::Partition}:iam::123456789012:role/cdk-hnb659fds-cfn-exec-role-123456789012-eu-west-1',
};
const { keyAdminRoleArn } = productionStage;
const throughDynamoDB = 'dynamodb.eu-west-1.amazonaws.com';
const throughBackup = 'backup.eu-west-1.amazonaws.com';
/** What uses the key, rather than administering it or reading its state. */
const useActions = ['kms:Encrypt', 'kms:Decrypt', 'kms:ReEncrypt', 'kms:GenerateDataKey', 'kms:CreateGrant'];
const usesTheKey = (statement: Statement) =>
  asArray(statement.Action).some((action) => useActions.some((use) => action.startsWith(use)));

describe('the table key', () => {
  let resources: Record<string, Resource>;
  let template: Template;
  let keyId: string;
  let statements: Statement[];
  beforeAll(() => {
    template = synthesizeProduction().service;
    resources = resourcesOf(template);
    const keys = Object.entries(resources).filter(
      ([, resource]) =>
        resource.Type === 'AWS::KMS::Key' && String(resource.Properties.Description).startsWith('Encrypts the table'),
    );
    expect(keys).toHaveLength(1);
    keyId = keys[0]?.[0] ?? '';
    statements = statementsOf(resources[keyId]?.Properties.KeyPolicy);
  });
  const statement = (sid: string) => {
    const found = statements.filter((candidate) => candidate.Sid === sid);
    expect(found, sid).toHaveLength(1);
    return found[0] as Statement;
  };

  it('encrypts the table with a rotating customer managed key that is kept when the stack goes, the same key as ever', () => {
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: arnOf(keyId) },
    });
    // The logical id and every property but the policy as the key was first deployed: it is not replaced.
    expect(keyId).toBe('TableKeyF581D96F');
    const { KeyPolicy: _policy, ...properties } = resources[keyId]?.Properties ?? {};
    expect(properties).toEqual({
      Description: 'Encrypts the table of BiTenantAdmin-prod (tenants, tokens, webhook secrets)',
      EnableKeyRotation: true,
      PendingWindowInDays: 30,
    });
    expect(resources[keyId]?.DeletionPolicy).toBe('Retain');
    // What a point-in-time restore names (docs/operations.md).
    template.hasOutput('TableKeyArn', { Value: arnOf(keyId) });
  });

  it('gives nobody the whole key: no kms:*, and the account root is named nowhere', () => {
    for (const { Sid, Effect, Action, Resource } of statements) {
      expect({ Sid, Effect, Resource }).toEqual({ Sid, Effect: 'Allow', Resource: '*' });
      expect(asArray(Action), Sid).not.toContain('kms:*');
    }
    expect(JSON.stringify(statements)).not.toMatch(/:root\b/);
  });

  it('lets the key administrator and the deploying CloudFormation role administer it, and nobody else', () => {
    const administration = statement('KeyAdministration');
    expect(administration.Principal).toEqual({ AWS: [deployingRole, keyAdminRoleArn] });
    expect(administration.Action).toEqual(keyAdministrationActions);
    expect(administration.Condition).toBeUndefined();
    // Putting the next policy (the lockout safety check), disabling and deleting are theirs alone.
    for (const action of ['kms:PutKeyPolicy', 'kms:DisableKey', 'kms:ScheduleKeyDeletion'])
      expect(
        statements.filter((candidate) =>
          asArray(candidate.Action).some((pattern) => new RegExp(`^${pattern.replace('*', '.*')}$`).test(action)),
        ),
        action,
      ).toEqual([administration]);
  });

  it('is used only through DynamoDB, or AWS Backup for who backs up and restores, and only from the stage account', () => {
    const using = statements.filter(usesTheKey);
    expect(using.length).toBeGreaterThan(0);
    for (const { Sid, Condition } of using) {
      expect(Condition?.StringEquals?.['kms:CallerAccount'], Sid).toBe('123456789012');
      const services = asArray(Condition?.StringEquals?.['kms:ViaService']);
      expect(services.length, Sid).toBeGreaterThan(0);
      for (const service of services) expect([throughDynamoDB, throughBackup], Sid).toContain(service);
    }
    // Those who create, back up and restore the table: the deploying role, the administrator, AWS Backup's role.
    const backupRole = Object.entries(resources).find(
      ([id, resource]) => resource.Type === 'AWS::IAM::Role' && id.startsWith('TableBackupRole'),
    );
    const operators = { AWS: [deployingRole, keyAdminRoleArn, arnOf(backupRole?.[0] ?? '')] };
    expect(statement('TableOperationsThroughDynamoDBAndBackup')).toMatchObject({
      Principal: operators,
      Action: tableOperationKeyActions,
      Condition: { StringEquals: { 'kms:ViaService': [throughDynamoDB, throughBackup] } },
    });
    // Grants only for AWS resources (the table's, a restored table's, a backup's).
    expect(statement('GrantsForDynamoDBAndBackup')).toMatchObject({
      Principal: operators,
      Action: 'kms:CreateGrant',
      Condition: { Bool: { 'kms:GrantIsForAWSResource': true } },
    });
    expect(statements.filter((candidate) => asArray(candidate.Action).includes('kms:CreateGrant'))).toHaveLength(1);
    // DynamoDB itself reads the key's state, as its documentation's key policy has it, and uses nothing.
    expect(statement('DynamoDBReadsTheKey')).toMatchObject({
      Principal: { Service: 'dynamodb.amazonaws.com' },
      Action: ['kms:Describe*', 'kms:Get*', 'kms:List*'],
    });
  });

  it("lets each table reader and writer use the key through DynamoDB, with what its access needs, in the key's policy", () => {
    const tableId = Object.keys(resources).find((id) => resources[id]?.Type === 'AWS::DynamoDB::Table') ?? '';
    // The stored data migration's role (lib/stored-data-migration.ts) may Scan the table besides, which it reads page by
    // page at deploy: a read, so under the read-write key actions (stored-data-migration.test.ts checks no other may).
    const migrationFunctions = Object.entries(resources).filter(
      ([id, resource]) => resource.Type === 'AWS::Lambda::Function' && /^StoredDataMigrationComplete[0-9A-F]{8}$/.test(id),
    );
    expect(migrationFunctions).toHaveLength(1);
    const migrationRole = (migrationFunctions[0]?.[1].Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
    // Each function role's table access, from the statements of its policies that name the table. A reader that
    // stamps its tokens' use (the UpdateItem of its own statement, service-stack.test.ts checks it) writes items too.
    const accessOf = new Map<string, 'read' | 'readWrite'>();
    for (const policy of Object.values(resources).filter((resource) => resource.Type === 'AWS::IAM::Policy')) {
      const policyStatements = statementsOf(policy.Properties.PolicyDocument);
      // IAM policies grant nothing on the key (its policy does not let them): none tries.
      expect(JSON.stringify(policyStatements)).not.toContain(keyId);
      for (const { Sid, Action, Resource } of policyStatements) {
        if (!asArray(Resource).some((resource) => JSON.stringify(resource) === JSON.stringify(arnOf(tableId)))) continue;
        const roles = asArray(policy.Properties.Roles as { Ref: string }[]);
        if (Sid?.startsWith('TokenUseStamps')) {
          for (const role of roles) accessOf.set(role.Ref, 'readWrite');
          continue;
        }
        const access = asArray(Action).includes('dynamodb:PutItem') ? 'readWrite' : 'read';
        const scans = roles.some((role) => role.Ref === migrationRole) ? ['dynamodb:Scan'] : [];
        expect(asArray(Action).sort()).toEqual([...tableActions[access], ...scans].sort());
        for (const role of roles) if (accessOf.get(role.Ref) !== 'readWrite') accessOf.set(role.Ref, access);
      }
    }
    expect([...accessOf.values()]).toEqual(expect.arrayContaining(['read', 'readWrite']));
    const named = (sid: string) => asArray(statement(sid).Principal.AWS) as unknown[];
    for (const [sid, access] of [
      ['FunctionsReadThroughDynamoDB', 'read'],
      ['FunctionsReadWriteThroughDynamoDB', 'readWrite'],
    ] as const) {
      expect(statement(sid)).toMatchObject({
        Action: tableKeyActions[access],
        Condition: { StringEquals: { 'kms:CallerAccount': '123456789012', 'kms:ViaService': [throughDynamoDB] } },
      });
      const roles = [...accessOf].filter(([, each]) => each === access).map(([role]) => arnOf(role));
      expect(named(sid)).toEqual(expect.arrayContaining(roles));
      expect(named(sid)).toHaveLength(roles.length);
    }
  });

  it("is the table's alone: only the table and its backup vault are encrypted under it", () => {
    // Every resource's encryption setting (SSESpecification, KmsMasterKeyId, EncryptionKeyArn, …) that names the key.
    const underTheKey = Object.entries(resources)
      .filter(([, resource]) =>
        Object.entries(resource.Properties ?? {}).some(
          ([name, value]) => /kms|encrypt|sse/i.test(name) && JSON.stringify(value).includes(JSON.stringify(arnOf(keyId))),
        ),
      )
      .map(([, resource]) => resource.Type)
      .sort();
    expect(underTheKey).toEqual(['AWS::Backup::BackupVault', 'AWS::DynamoDB::Table']);
    // The other keys (the alarm topics') have policies of their own, none of these statements.
    for (const [id, resource] of Object.entries(resources).filter(([, each]) => each.Type === 'AWS::KMS::Key'))
      if (id !== keyId) expect(JSON.stringify(resource.Properties.KeyPolicy)).not.toContain('KeyAdministration');
  });
});
