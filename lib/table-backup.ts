import { Duration, Stack, Validations } from 'aws-cdk-lib';
import { BackupPlan, BackupPlanRule, BackupResource, BackupVault } from 'aws-cdk-lib/aws-backup';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import type { ServiceTable } from './service-table.ts';

/** How long each daily backup, and its copy, is kept: as far back as point-in-time recovery reaches. */
const BACKUP_RETENTION = Duration.days(35);

/**
 * AWS Backup of the table, beside its point-in-time recovery: a backup every day at 05:00 UTC (AWS Backup's own
 * daily rule) into a vault of its own, kept 35 days, and with `backupCopyVaultArn` each one copied to that vault of
 * another account or region, kept as long (docs/operations.md, Backups). Four resources: the vault, the plan, the
 * selection of the table, and the role AWS Backup backs up and restores with.
 *
 * The vault is encrypted with the table's own key rather than a key of its own: a backup is the same tenants' data,
 * so the same key, administrators and audit trail guard it, and no second key and policy have to be kept in step.
 * (Backups of DynamoDB's advanced features are encrypted with the vault's key; without them, with the table's: either
 * way, that key. https://docs.aws.amazon.com/aws-backup/latest/devguide/encryption.html) What must survive the key
 * itself (disabled, scheduled for deletion, or the account lost) is the copy: AWS Backup encrypts a copy with the key
 * of the vault it goes to. https://docs.aws.amazon.com/aws-backup/latest/devguide/create-cross-account-backup.html
 *
 * The role is the stack's own rather than AWSBackupDefaultServiceRole: that one exists only once someone has used
 * the AWS Backup console in the account, every other plan of the account shares it, and the key's policy must name a
 * role that exists (KMS refuses a principal it cannot find).
 */
export class TableBackup extends Construct {
  constructor(scope: Construct, id: string, table: ServiceTable) {
    super(scope, id);
    const stack = Stack.of(this);
    // A name the operator's commands can spell (docs/operations.md); like the table, it outlives the stack.
    const vault = new BackupVault(this, 'Vault', { backupVaultName: `${stack.stackName}-table`, encryptionKey: table.key });
    const copyVaultArn = table.settings.backupCopyVaultArn;
    const plan = new BackupPlan(this, 'Plan', {
      backupPlanName: `${stack.stackName}-table`,
      backupVault: vault,
      backupPlanRules: [
        new BackupPlanRule({
          ruleName: 'Daily',
          scheduleExpression: Schedule.cron({ hour: '5', minute: '0' }),
          deleteAfter: BACKUP_RETENTION,
          copyActions: copyVaultArn
            ? [
                {
                  destinationBackupVault: BackupVault.fromBackupVaultArn(this, 'CopyVault', copyVaultArn),
                  deleteAfter: BACKUP_RETENTION,
                },
              ]
            : undefined,
        }),
      ],
    });
    const role = new Role(this, 'Role', {
      // Named, as the vault is, for the restore command (docs/operations.md).
      roleName: `${stack.stackName}-table-backup`,
      assumedBy: new ServicePrincipal('backup.amazonaws.com'),
      description: `AWS Backup backs up and restores the table of ${stack.stackName} with it`,
    });
    // The same role restores (aws backup start-restore-job --iam-role-arn): AWS Backup's restore policy too.
    plan.addSelection('Table', { resources: [BackupResource.fromDynamoDbTable(table.table)], role, allowRestores: true });
    // AWS Backup reads the table and writes the vault under the table's key, and a restore makes a table under it.
    table.allowTableOperations(role);
    for (const policy of ['AWSBackupServiceRolePolicyForBackup', 'AWSBackupServiceRolePolicyForRestores'])
      Validations.of(role).acknowledge({
        id: `AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/${policy}]`,
        reason:
          `${policy} is AWS Backup's own policy for its service role, kept up to date by AWS as the services it backs ` +
          'up change; this role is assumed by AWS Backup alone, for this one table (its only selection).',
      });
  }
}
