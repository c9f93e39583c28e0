/**
 * `npm start`: the whole service on this machine. `-- --in-memory` keeps nothing; `-- --edge` puts the
 * edge in front, as a production stage has it (the viewer function and the origin check).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { JavaMissingError } from '#local/dynamodb-local.ts';
import { LocalClientTokenError } from '#local/local-client.ts';
import { ensurePortFree, PortBusyError } from '#local/ports.ts';
import type { TwinRuntime } from '#local/environment.ts';
import { startTwin } from '#local/twin.ts';
import { queueUrlVariable } from '#functions/core/store/queue-definitions.ts';

const dataDir = process.env.DATA_DIR || '.data';
const runtimeFile = join(dataDir, 'twin.json');

const { values } = parseArgs({
  options: { 'in-memory': { type: 'boolean', default: false }, edge: { type: 'boolean', default: false } },
});
const inMemory = values['in-memory'] ?? false;
const port = Number(process.env.PORT ?? 3000);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`PORT must be a port number, not ${process.env.PORT}`);
  process.exit(1);
}

try {
  await ensurePortFree(port);
  const twin = await startTwin({
    port,
    dataDir: inMemory ? undefined : dataDir,
    clientToken: process.env.LOCAL_CLIENT_TOKEN || undefined,
    tenantBaseDomain: process.env.TENANT_BASE_DOMAIN || undefined,
    log: true,
    edge: values.edge ?? false,
  });
  // Lets the admin CLI reach this twin's data (its DynamoDB Local and keyring) while it runs, in either mode.
  mkdirSync(dataDir, { recursive: true });
  const runtime: TwinRuntime = {
    pid: process.pid,
    url: twin.url,
    dynamodbEndpoint: twin.dynamodbEndpoint,
    signingKeysFile: twin.environment.SIGNING_KEYS_FILE as string,
    tokenKeysFile: twin.environment.TOKEN_KEYS_FILE as string,
    inMemory,
    queueEndpoint: twin.environment.SQS_ENDPOINT as string,
    rolloutQueueUrl: twin.environment[queueUrlVariable('rollout')] as string,
  };
  writeFileSync(runtimeFile, JSON.stringify(runtime));
  console.log(
    [
      '',
      `  Local twin ready at ${twin.url}${values.edge ? ` (through the edge; the gateway behind it is ${twin.originUrl})` : ''}`,
      `  Client token:  ${twin.clientToken}`,
      `  Data:          ${inMemory ? 'in memory (nothing kept)' : `${dataDir}/`}`,
      `  DynamoDB Local: ${twin.dynamodbEndpoint} (table ${twin.tableName})`,
      '',
      `  curl -s -X POST ${twin.url}/tenants -H "Authorization: Bearer ${twin.clientToken}" \\`,
      `       -H 'Content-Type: application/json' -d '{"nome":"Acme","ativo":true}'`,
      '',
      '  Ctrl-C stops it.',
      '',
    ].join('\n'),
  );
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    rmSync(runtimeFile, { force: true });
    await twin.stop();
    process.exit(0);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (error) {
  if (error instanceof JavaMissingError || error instanceof LocalClientTokenError || error instanceof PortBusyError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
