/**
 * What the twin and the admin CLI agree on without starting anything: the local table's name, the
 * environment that points the handlers at the twin's emulators, and what a running twin records.
 * Apart from local/twin.ts, which imports every handler: the CLI starts in a fraction of the time.
 */
export const localTableName = 'bi-tenant-admin';

/** What a running `npm start` records in its data folder (twin.json), so that the admin CLI works on its data. */
export interface TwinRuntime {
  pid: number;
  url: string;
  dynamodbEndpoint: string;
  signingKeysFile: string;
  tokenKeysFile: string;
  inMemory: boolean;
  /** The queues' endpoint and the rollout queue's URL: where the admin CLI queues a rollout it starts. */
  queueEndpoint: string;
  rolloutQueueUrl: string;
}

/** Points the in-process handlers (and the SDK) at the twin's emulators, as the stack's env does on AWS. */
export function localEnvironment(dynamodbEndpoint: string, tenantBaseDomain = 'localhost'): Record<string, string> {
  return {
    TABLE_NAME: localTableName,
    DYNAMODB_ENDPOINT: dynamodbEndpoint,
    TENANT_BASE_DOMAIN: tenantBaseDomain,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    // The twin runs on the machine's Node.js (20 is supported by this project; Lambda runs 22).
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    // EMF metric lines are for CloudWatch; locally they would only bury the logs.
    POWERTOOLS_METRICS_DISABLED: 'true',
  };
}
