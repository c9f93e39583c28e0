/**
 * The single table's shape. The CDK stack and the local twin both build the table from this
 * object, and the repositories query the indexes named here, so the three cannot drift apart.
 * Every key attribute is a string.
 */
export const tableDefinition = {
  partitionKey: 'pk',
  sortKey: 'sk',
  timeToLiveAttribute: 'expiresAt',
  globalIndexes: [{ indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' }],
} as const;

export type IndexName = (typeof tableDefinition.globalIndexes)[number]['indexName'];
