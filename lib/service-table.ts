import { Duration, RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Key } from 'aws-cdk-lib/aws-kms';
import { type DispatchSettings, dispatchSettingVariables } from '#functions/core/schedules/dispatch-settings.ts';
import { type RetentionSettings, retentionSettingVariables } from '#functions/core/store/retention.ts';
import { tableDefinition } from '#functions/core/store/table-definition.ts';

export interface ServiceTableProps {
  /** Deletion protection is on unless the stage is a throwaway one. */
  ephemeral: boolean;
  /** The sharding and page size of the due-schedules index, which the functions that read it are told. */
  dispatch: DispatchSettings;
  /** How long the functions keep what they write to expire (runs, deliveries). */
  retention: RetentionSettings;
}

/** The service's one DynamoDB table, shaped by functions/core/store/table-definition.ts (as the twin's is). */
export class ServiceTable {
  readonly table: Table;
  /**
   * The customer managed key the table is encrypted under. Webhook secrets, tenant variables and
   * token hashes rest under a key this account controls: its use is in CloudTrail, it can be
   * disabled to cut every reader off at once, and it rotates yearly. Functions may use it only
   * through DynamoDB (function-roles.ts), never to decrypt anything themselves.
   */
  readonly key: Key;
  /** What every function that touches the table reads: the table, the shape of the due-schedules index, the retentions. */
  readonly environment: Record<string, string>;

  constructor(stack: Stack, props: ServiceTableProps) {
    this.key = new Key(stack, 'TableKey', {
      description: `Encrypts the table of ${stack.stackName} (tenants, tokens, webhook secrets)`,
      enableKeyRotation: true,
      // Every backup and point-in-time restore of the table needs it: it outlives the stack as the table does.
      removalPolicy: RemovalPolicy.RETAIN,
      pendingWindow: Duration.days(30),
    });
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
    });
    for (const index of tableDefinition.globalIndexes) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }
    this.environment = {
      TABLE_NAME: this.table.tableName,
      [dispatchSettingVariables.dueShards]: String(props.dispatch.dueShards),
      [dispatchSettingVariables.duePageSize]: String(props.dispatch.duePageSize),
      [retentionSettingVariables.runRetentionDays]: String(props.retention.runRetentionDays),
      [retentionSettingVariables.deliveryRetentionDays]: String(props.retention.deliveryRetentionDays),
    };
  }
}
