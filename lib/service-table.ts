import { DefaultStackSynthesizer, Duration, Fn, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { ArnPrincipal, type IPrincipal, PolicyDocument, PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type DispatchSettings, dispatchSettingVariables } from '#functions/core/schedules/dispatch-settings.ts';
import { type RetentionSettings, retentionSettingVariables } from '#functions/core/store/retention.ts';
import { tableDefinition } from '#functions/core/store/table-definition.ts';
import { type TableSettings, tableSettings } from './deployment-settings.ts';

export interface ServiceTableProps {
  /** Deletion protection is on unless the stage is a throwaway one. */
  ephemeral: boolean;
  /** The sharding and page size of the due-schedules index, which the functions that read it are told. */
  dispatch: DispatchSettings;
  /** How long the functions keep what they write to expire (runs, deliveries). */
  retention: RetentionSettings;
}

/**
 * What the key's administrators may do: AWS's key administrator statement (manage, disable, schedule the
 * deletion of, rotate the key), which uses nothing with the key.
 * https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html#key-policy-default-allow-administrators
 */
export const keyAdministrationActions = [
  'kms:Create*',
  'kms:Describe*',
  'kms:Enable*',
  'kms:List*',
  'kms:Put*',
  'kms:Update*',
  'kms:Revoke*',
  'kms:Disable*',
  'kms:Get*',
  'kms:Delete*',
  'kms:TagResource',
  'kms:UntagResource',
  'kms:ScheduleKeyDeletion',
  'kms:CancelKeyDeletion',
  'kms:RotateKeyOnDemand',
];

/**
 * What DynamoDB requires of the key on behalf of whoever creates, backs up or restores the table, besides
 * kms:CreateGrant (a statement of its own: only grants for AWS resources).
 * https://docs.aws.amazon.com/kms/latest/developerguide/services-dynamodb.html#dynamodb-customer-cmk-policy
 */
export const tableOperationKeyActions = [
  'kms:Encrypt',
  'kms:Decrypt',
  'kms:ReEncrypt*',
  'kms:GenerateDataKey*',
  'kms:DescribeKey',
];

/**
 * The role CloudFormation deploys the stack with: the execution role of the CDK bootstrap
 * (`cdk-hnb659fds-cfn-exec-role-<account>-<region>`), named as the stack's synthesizer names it.
 */
function deployingRoleOf(stack: Stack): IPrincipal {
  const synthesizer = stack.synthesizer;
  if (!(synthesizer instanceof DefaultStackSynthesizer))
    throw new Error(
      `${stack.stackName}: the table key's policy names the CloudFormation execution role of the CDK bootstrap, which ` +
        'only the DefaultStackSynthesizer deploys with',
    );
  return new ArnPrincipal(Fn.sub(synthesizer.cloudFormationExecutionRoleArn));
}

/** The service's one DynamoDB table, shaped by functions/core/store/table-definition.ts (as the twin's is). */
export class ServiceTable {
  readonly table: Table;
  /**
   * The customer managed key the table is encrypted under. Webhook secrets, tenant variables and
   * token hashes rest under a key this account controls: its use is in CloudTrail, it can be
   * disabled to cut every reader off at once, and it rotates yearly. Its policy names everyone who
   * may do anything with it (see the constructor); functions may use it only through DynamoDB
   * (function-roles.ts), never to decrypt anything themselves.
   */
  readonly key: Key;
  /** The key administrator, the warm throughput and the backup copy of the stage (lib/deployment-settings.ts). */
  readonly settings: TableSettings;
  /** What every function that touches the table reads: the table, the shape of the due-schedules index, the retentions. */
  readonly environment: Record<string, string>;
  /** The key policy's statements of what DynamoDB and AWS Backup do with the key for those who operate the table. */
  private readonly operations: PolicyStatement[];
  /** The key policy's statements of the functions' use of the key, one per set of actions. */
  private readonly uses = new Map<string, PolicyStatement>();
  /** The conditions of every use of the key but its administration: from this account, through these services only. */
  private readonly through: (services: string[]) => Record<string, Record<string, unknown>>;

  constructor(stack: Stack, props: ServiceTableProps) {
    this.settings = tableSettings(stack, { ephemeral: props.ephemeral });
    this.through = (services) => ({
      StringEquals: {
        'kms:CallerAccount': stack.account,
        'kms:ViaService': services.map((service) => `${service}.${stack.region}.amazonaws.com`),
      },
    });
    // The key policy names everyone, rather than the default's account root, which would let any IAM policy of the
    // account use or disable the key (https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html).
    // Without that statement IAM policies grant nothing on the key, so the functions are named here too
    // (allowUseThroughDynamoDB). The deploying role administers it: KMS refuses a key policy that would stop the one
    // who puts it from putting the next (the lockout safety check), and every later deploy puts it again.
    // https://docs.aws.amazon.com/kms/latest/APIReference/API_PutKeyPolicy.html (BypassPolicyLockoutSafetyCheck)
    const operators = [
      deployingRoleOf(stack),
      ...(this.settings.keyAdminRoleArn ? [new ArnPrincipal(this.settings.keyAdminRoleArn)] : []),
    ];
    // Those who create, update, back up or restore the table (the deploying role, the administrator, AWS Backup's
    // role: table-backup.ts) have DynamoDB and AWS Backup use the key for them, grants included.
    this.operations = [
      new PolicyStatement({
        sid: 'TableOperationsThroughDynamoDBAndBackup',
        principals: operators,
        actions: tableOperationKeyActions,
        resources: ['*'],
        conditions: this.through(['dynamodb', 'backup']),
      }),
      new PolicyStatement({
        sid: 'GrantsForDynamoDBAndBackup',
        principals: operators,
        actions: ['kms:CreateGrant'],
        resources: ['*'],
        conditions: { ...this.through(['dynamodb', 'backup']), Bool: { 'kms:GrantIsForAWSResource': true } },
      }),
    ];
    const policy = new PolicyDocument({
      statements: [
        new PolicyStatement({
          sid: 'KeyAdministration',
          principals: operators,
          actions: keyAdministrationActions,
          resources: ['*'],
        }),
        ...this.operations,
        // DynamoDB's own reads of the key's state, as its documentation's key policy has them.
        // https://docs.aws.amazon.com/kms/latest/developerguide/services-dynamodb.html#dynamodb-customer-cmk-policy
        new PolicyStatement({
          sid: 'DynamoDBReadsTheKey',
          principals: [new ServicePrincipal('dynamodb.amazonaws.com')],
          actions: ['kms:Describe*', 'kms:Get*', 'kms:List*'],
          resources: ['*'],
        }),
      ],
    });
    this.key = new Key(stack, 'TableKey', {
      description: `Encrypts the table of ${stack.stackName} (tenants, tokens, webhook secrets)`,
      enableKeyRotation: true,
      // Every backup and point-in-time restore of the table needs it: it outlives the stack as the table does.
      removalPolicy: RemovalPolicy.RETAIN,
      pendingWindow: Duration.days(30),
      policy,
    });
    // What a burst takes at once, rather than throttled until DynamoDB has split the partitions (never lowered).
    // https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput.html
    const { warmReadUnits, warmWriteUnits } = this.settings;
    this.table = new Table(stack, 'Table', {
      partitionKey: { name: tableDefinition.partitionKey, type: AttributeType.STRING },
      sortKey: { name: tableDefinition.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: tableDefinition.timeToLiveAttribute,
      encryption: TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: this.key,
      deletionProtection: !props.ephemeral,
      removalPolicy: RemovalPolicy.RETAIN,
      warmThroughput: warmThroughputOf({ readUnitsPerSecond: warmReadUnits, writeUnitsPerSecond: warmWriteUnits }),
    });
    for (const index of tableDefinition.globalIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
        // Its writes throttle the table's when it is short of them (a burst moves a due entry per fire); it is read
        // by Query pages of a few hundred entries, which what DynamoDB gives a new index covers.
        warmThroughput: warmThroughputOf({ writeUnitsPerSecond: warmWriteUnits }),
      });
    }
    this.environment = {
      TABLE_NAME: this.table.tableName,
      [dispatchSettingVariables.dueShards]: String(props.dispatch.dueShards),
      [dispatchSettingVariables.duePageSize]: String(props.dispatch.duePageSize),
      [retentionSettingVariables.runRetentionDays]: String(props.retention.runRetentionDays),
      [retentionSettingVariables.deliveryRetentionDays]: String(props.retention.deliveryRetentionDays),
      [retentionSettingVariables.auditRetentionDays]: String(props.retention.auditRetentionDays),
    };
  }

  /**
   * Lets a principal that creates, backs up or restores the table (AWS Backup's role) have DynamoDB and
   * AWS Backup use the key for it, as the deploying role and the key's administrator may.
   */
  allowTableOperations(principal: IPrincipal): void {
    for (const statement of this.operations) statement.addPrincipals(principal);
  }

  /**
   * Lets a principal (a function's role) have DynamoDB use the key for it, with these actions only. Principals
   * with the same actions share a statement, named `sid` (the key policy takes 32 KB at most).
   */
  allowUseThroughDynamoDB(sid: string, principal: IPrincipal, actions: readonly string[]): void {
    let statement = this.uses.get(sid);
    if (!statement) {
      statement = new PolicyStatement({ sid, actions: [...actions], resources: ['*'], conditions: this.through(['dynamodb']) });
      this.key.addToResourcePolicy(statement);
      this.uses.set(sid, statement);
    }
    if (JSON.stringify(statement.actions) !== JSON.stringify(actions))
      throw new Error(
        `The key policy's statement ${sid} has the actions ${statement.actions.join(', ')}, not ${actions.join(', ')}`,
      );
    statement.addPrincipals(principal);
  }
}

/** A warm throughput for CloudFormation, or none when neither number is set. */
function warmThroughputOf(units: { readUnitsPerSecond?: number; writeUnitsPerSecond?: number }) {
  return units.readUnitsPerSecond === undefined && units.writeUnitsPerSecond === undefined ? undefined : units;
}
