import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ensureTable } from './create-table.ts';
import { startDynamoDbLocal } from './dynamodb-local.ts';
import { startGateway } from './gateway.ts';
import { ensureLocalClient } from './local-client.ts';

export interface TwinOptions {
  /** 0 picks a free port. */
  port: number;
  /** Where data is kept; undefined keeps everything in memory. */
  dataDir?: string;
  /** Use exactly this client token (LOCAL_CLIENT_TOKEN). */
  clientToken?: string;
  /** Host name under which tenant domains are minted. */
  tenantBaseDomain?: string;
  /** Print one line per request. */
  log?: boolean;
}

export interface Twin {
  url: string;
  clientId: number;
  clientToken: string;
  dynamodbEndpoint: string;
  tableName: string;
  stop(): Promise<void>;
}

export const localTableName = 'bi-tenant-admin';

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
  };
}

/** Starts the whole service on this machine: DynamoDB Local, the table, the local client, the gateway. */
export async function startTwin(options: TwinOptions): Promise<Twin> {
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  const dynamo = await startDynamoDbLocal({ dataDir: options.dataDir && join(options.dataDir, 'dynamodb') });
  try {
    Object.assign(process.env, localEnvironment(dynamo.endpoint, options.tenantBaseDomain));
    const client = new DynamoDBClient({ endpoint: dynamo.endpoint });
    await ensureTable(client, localTableName);
    client.destroy();
    const local = await ensureLocalClient({
      stateFile: options.dataDir && join(options.dataDir, 'local-client.json'),
      preferredToken: options.clientToken,
    });
    const gateway = await startGateway({ port: options.port, log: options.log });
    return {
      url: gateway.url,
      clientId: local.clientId,
      clientToken: local.token,
      dynamodbEndpoint: dynamo.endpoint,
      tableName: localTableName,
      stop: async () => {
        await gateway.close();
        await dynamo.stop();
      },
    };
  } catch (error) {
    await dynamo.stop();
    throw error;
  }
}
