/**
 * The table's recovery beyond point-in-time recovery: AWS Backup every day, kept 35 days, copied to another
 * account or region by setting; its warm throughput, sized for a burst; and the table's settings, each refused
 * with its name when it is wrong.
 */
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { TABLE_WARM_READ_UNITS, TABLE_WARM_WRITE_UNITS, tableSettings } from '#lib/deployment-settings.ts';
import { serviceStacks } from '#lib/service-app.ts';
import { stageOf } from '#lib/stage.ts';
import { testApp } from '../support/cdk-app.ts';
import { productionStage, synthesizeProduction, TEST_BASE_DOMAIN } from '../support/stages.ts';

interface Resource {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
}

const resourcesOf = (template: Template) => (template.toJSON() as { Resources: Record<string, Resource> }).Resources;
/** The one resource of a type: its logical id and itself. */
function single(template: Template, type: string): [string, Resource] {
  const found = Object.entries(resourcesOf(template)).filter(([, resource]) => resource.Type === type);
  expect(
    found.map(([id]) => id),
    type,
  ).toHaveLength(1);
  return found[0] as [string, Resource];
}
const backupResourcesOf = (template: Template) =>
  Object.values(resourcesOf(template)).filter((resource) => resource.Type.startsWith('AWS::Backup::'));

/** A vault of another region of the stage's account, where the copies go. */
const copyVaultArn = 'arn:aws:backup:eu-central-1:123456789012:backup-vault:bi-table-copies';

/** The table's settings of a stage with `settings` only, in a stack of the production stage's account and region. */
function settingsOf(settings: Record<string, unknown>, ephemeral = false) {
  const app = testApp({ stage: 'prod', stages: { prod: settings } });
  const stack = new Stack(app, 'Settings', { env: { account: productionStage.account, region: productionStage.region } });
  return tableSettings(stack, { ephemeral });
}

/** The production stage's service template, synthesized once before the tests (the first synthesis takes long). */
let service: Template;
beforeAll(() => {
  service = synthesizeProduction().service;
});

describe('table backups', () => {
  it('backs the table up every day into a vault of its own under the table key, each backup kept 35 days', () => {
    const [keyId] = Object.entries(resourcesOf(service)).find(
      ([id, resource]) => resource.Type === 'AWS::KMS::Key' && id.startsWith('TableKey'),
    ) ?? [''];
    const [vaultId, vault] = single(service, 'AWS::Backup::BackupVault');
    expect(vault.Properties).toEqual({
      BackupVaultName: 'BiTenantAdmin-prod-table',
      EncryptionKeyArn: { 'Fn::GetAtt': [keyId, 'Arn'] },
    });
    // A vault that holds recovery points cannot be deleted anyway; the stack's deletion leaves it and them.
    expect(vault.DeletionPolicy).toBe('Retain');
    const [, plan] = single(service, 'AWS::Backup::BackupPlan');
    expect(plan.Properties.BackupPlan).toEqual({
      BackupPlanName: 'BiTenantAdmin-prod-table',
      BackupPlanRule: [
        {
          RuleName: 'Daily',
          ScheduleExpression: 'cron(0 5 * * ? *)',
          Lifecycle: { DeleteAfterDays: 35 },
          TargetBackupVault: { 'Fn::GetAtt': [vaultId, 'BackupVaultName'] },
        },
      ],
    });
    // Point-in-time recovery stays on beside it.
    service.hasResourceProperties('AWS::DynamoDB::Table', {
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
    });
  });

  it('selects the table alone, with a role of its own that backs it up and restores it', () => {
    const [tableId] = single(service, 'AWS::DynamoDB::Table');
    const [planId] = single(service, 'AWS::Backup::BackupPlan');
    const [, selection] = single(service, 'AWS::Backup::BackupSelection');
    const [roleId, role] = Object.entries(resourcesOf(service)).find(
      ([, resource]) => resource.Type === 'AWS::IAM::Role' && resource.Properties.RoleName === 'BiTenantAdmin-prod-table-backup',
    ) ?? ['', undefined];
    expect(selection.Properties).toEqual({
      BackupPlanId: { 'Fn::GetAtt': [planId, 'BackupPlanId'] },
      BackupSelection: {
        IamRoleArn: { 'Fn::GetAtt': [roleId, 'Arn'] },
        SelectionName: 'Table',
        Resources: [{ 'Fn::GetAtt': [tableId, 'Arn'] }],
      },
    });
    expect(JSON.stringify(role?.Properties.AssumeRolePolicyDocument)).toContain('"Service":"backup.amazonaws.com"');
    expect(JSON.stringify(role?.Properties.ManagedPolicyArns)).toMatch(
      /service-role\/AWSBackupServiceRolePolicyForBackup".*service-role\/AWSBackupServiceRolePolicyForRestores"/,
    );
  });

  it('copies each daily backup to the vault of backupCopyVaultArn, kept as long, and only with it', () => {
    const [, plan] = single(synthesizeProduction({ backupCopyVaultArn: copyVaultArn }).service, 'AWS::Backup::BackupPlan');
    expect((plan.Properties.BackupPlan as { BackupPlanRule: unknown[] }).BackupPlanRule).toEqual([
      expect.objectContaining({
        RuleName: 'Daily',
        Lifecycle: { DeleteAfterDays: 35 },
        CopyActions: [{ DestinationBackupVaultArn: copyVaultArn, Lifecycle: { DeleteAfterDays: 35 } }],
      }),
    ]);
    const [, withoutCopy] = single(service, 'AWS::Backup::BackupPlan');
    expect(JSON.stringify(withoutCopy.Properties)).not.toContain('CopyActions');
  });

  it('has no backups, and no warm throughput, in a throwaway stage', () => {
    const app = testApp({ stage: 'dev', stages: { dev: { ephemeral: true, tenantBaseDomain: TEST_BASE_DOMAIN } } });
    const { service } = serviceStacks(app, stageOf(app, { account: productionStage.account, region: productionStage.region }));
    const template = Template.fromStack(service);
    expect(backupResourcesOf(template)).toEqual([]);
    const [, table] = single(template, 'AWS::DynamoDB::Table');
    expect(JSON.stringify(table.Properties)).not.toContain('WarmThroughput');
  });
});

describe('warm throughput', () => {
  const warmThroughputOf = (template: Template) => {
    const [, table] = single(template, 'AWS::DynamoDB::Table');
    const indexes = table.Properties.GlobalSecondaryIndexes as { IndexName: string; WarmThroughput?: unknown }[];
    return {
      table: table.Properties.WarmThroughput,
      indexes: Object.fromEntries(indexes.map((index) => [index.IndexName, index.WarmThroughput])),
    };
  };

  it("warms a production stage's table to a burst of 100,000 schedules: 16,000 reads and 32,000 writes a second, gsi1 to the same writes", () => {
    expect(warmThroughputOf(service)).toEqual({
      table: { ReadUnitsPerSecond: 16_000, WriteUnitsPerSecond: 32_000 },
      indexes: { gsi1: { WriteUnitsPerSecond: 32_000 } },
    });
  });

  it('takes it from tableWarmReadUnits and tableWarmWriteUnits, strings (the command line) or numbers (cdk.json)', () => {
    expect(warmThroughputOf(synthesizeProduction({ tableWarmReadUnits: '20000', tableWarmWriteUnits: 40_000 }).service)).toEqual({
      table: { ReadUnitsPerSecond: 20_000, WriteUnitsPerSecond: 40_000 },
      indexes: { gsi1: { WriteUnitsPerSecond: 40_000 } },
    });
  });

  it('gives a throwaway stage only what it sets', () => {
    expect(settingsOf({}, true)).toMatchObject({ warmReadUnits: undefined, warmWriteUnits: undefined });
    expect(settingsOf({ tableWarmWriteUnits: '8000' }, true)).toMatchObject({ warmReadUnits: undefined, warmWriteUnits: 8000 });
  });
});

describe('the table settings', () => {
  it('refuses warm throughput below what a new table takes or above the table quota, naming the setting', () => {
    for (const [name, limits, values] of [
      ['tableWarmReadUnits', TABLE_WARM_READ_UNITS, ['11999', '40001', 'many']],
      ['tableWarmWriteUnits', TABLE_WARM_WRITE_UNITS, ['3999', 40_001, '4000.5']],
    ] as const)
      for (const value of values)
        expect(() => settingsOf({ [name]: value }), `${name}=${value}`).toThrow(
          `Context ${name} must be a whole number from ${limits.min} to ${limits.max}, not "${value}"`,
        );
  });

  it("refuses a backupCopyVaultArn that is no backup vault, or a vault of the stack's own account and region", () => {
    expect(settingsOf({ backupCopyVaultArn: copyVaultArn }).backupCopyVaultArn).toBe(copyVaultArn);
    // Another account of the same region is as good as another region.
    expect(() => settingsOf({ backupCopyVaultArn: 'arn:aws:backup:eu-west-1:210987654321:backup-vault:copies' })).not.toThrow();
    expect(() => settingsOf({ backupCopyVaultArn: 'arn:aws:s3:::bi-table-copies' })).toThrow(
      /^Context backupCopyVaultArn must be a backup vault ARN/,
    );
    expect(() =>
      synthesizeProduction({ backupCopyVaultArn: 'arn:aws:backup:eu-west-1:123456789012:backup-vault:copies' }),
    ).toThrow(/^Context backupCopyVaultArn is a vault of the stack's own account and region/);
  });

  it('requires keyAdminRoleArn of a production stage that names its account, and says how to set it', () => {
    expect(() => synthesizeProduction({ keyAdminRoleArn: undefined })).toThrow(
      'Context keyAdminRoleArn is required for the production stage prod: the ARN of the IAM role that administers ' +
        "the table's KMS key (and may restore the table and run the admin CLI), such as " +
        'arn:aws:iam::123456789012:role/<name>, under stages.prod in cdk.json (or -c keyAdminRoleArn=…)',
    );
    // A throwaway stage, or a stack built without a stage's account, has only the deploying role administer the key.
    expect(settingsOf({ account: productionStage.account }, true).keyAdminRoleArn).toBeUndefined();
    expect(settingsOf({}).keyAdminRoleArn).toBeUndefined();
  });

  it("refuses a keyAdminRoleArn that is not an IAM role ARN of the stage's account", () => {
    expect(settingsOf({ keyAdminRoleArn: 'arn:aws:iam::123456789012:role/ops/KeyAdmin' }).keyAdminRoleArn).toBe(
      'arn:aws:iam::123456789012:role/ops/KeyAdmin',
    );
    expect(() => settingsOf({ keyAdminRoleArn: 'arn:aws:iam::123456789012:user/alice' })).toThrow(
      /^Context keyAdminRoleArn must be an IAM role ARN/,
    );
    expect(() => synthesizeProduction({ keyAdminRoleArn: 'arn:aws:iam::210987654321:role/KeyAdmin' })).toThrow(
      'Context keyAdminRoleArn is a role of account 210987654321, but the stack deploys to 123456789012',
    );
  });
});
