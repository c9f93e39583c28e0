import { RemovalPolicy, type Stack } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { type DispatchSettings, dispatchSettingVariables } from '#functions/core/schedules/dispatch-settings.ts';
import { tableDefinition } from '#functions/core/store/table-definition.ts';

export interface ServiceTableProps {
  stage: string;
  /** The sharding and page size of the due-schedules index, which the functions that read it are told. */
  dispatch: DispatchSettings;
}

/** The service's one DynamoDB table, shaped by functions/core/store/table-definition.ts (as the twin's is). */
export class ServiceTable {
  readonly table: Table;
  /** What every function that touches the table reads: the table, and the shape of the due-schedules index. */
  readonly environment: Record<string, string>;

  constructor(stack: Stack, props: ServiceTableProps) {
    this.table = new Table(stack, 'Table', {
      partitionKey: { name: tableDefinition.partitionKey, type: AttributeType.STRING },
      sortKey: { name: tableDefinition.sortKey, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: tableDefinition.timeToLiveAttribute,
      deletionProtection: props.stage === 'prod',
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
    };
  }
}
