import {
  type AttributeDefinition,
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { tableDefinition } from '../functions/core/store/table-definition.ts';

/** Creates the table, as the CDK stack declares it, unless it exists already. */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
    return;
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  const keyAttributes = [
    tableDefinition.partitionKey,
    tableDefinition.sortKey,
    ...tableDefinition.globalIndexes.flatMap((index) => [index.partitionKey, index.sortKey]),
  ];
  const attributeDefinitions: AttributeDefinition[] = keyAttributes.map((name) => ({ AttributeName: name, AttributeType: 'S' }));
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      AttributeDefinitions: attributeDefinitions,
      KeySchema: [
        { AttributeName: tableDefinition.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableDefinition.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: tableDefinition.globalIndexes.map((index) => ({
        IndexName: index.indexName,
        KeySchema: [
          { AttributeName: index.partitionKey, KeyType: 'HASH' },
          { AttributeName: index.sortKey, KeyType: 'RANGE' },
        ],
        Projection: { ProjectionType: 'ALL' },
      })),
    }),
  );
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: tableDefinition.timeToLiveAttribute, Enabled: true },
    }),
  );
}
