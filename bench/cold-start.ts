/**
 * Cold-start module load time: how long a fresh Node.js process takes to import a function's
 * bundle (what Lambda does on a cold start, before the first event), against a bare function
 * that imports only the same DynamoDB clients every function has.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { runForOutput } from './child-process.ts';
import { median } from './round-trips.ts';

/** Each bundle is loaded this many times (fresh processes), each time beside a bare bundle's load; the medians count. */
const runs = 7;

/** The environment a function reads at cold start; the values only need to exist. */
const functionEnvironment = {
  TABLE_NAME: 'bench',
  TENANT_BASE_DOMAIN: 'bench.example.com',
  AWS_REGION: 'us-east-1',
  POWERTOOLS_METRICS_DISABLED: 'true',
  RELOAD_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/reload.fifo',
  WEBHOOK_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/webhook',
  WEBHOOK_DLQ_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/webhook-dlq',
  PAYLOAD_BUCKET: 'bench',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

/** Milliseconds a fresh process takes to import the module at `file`. */
async function loadOnceMs(file: string): Promise<number> {
  const script = `const t = performance.now(); await import(${JSON.stringify(pathToFileURL(file).href)}); console.log(performance.now() - t);`;
  const output = await runForOutput(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...functionEnvironment, PATH: process.env.PATH },
  });
  const value = Number(output.trim().split('\n').at(-1));
  if (!Number.isFinite(value)) throw new Error(`Loading ${file} printed no time:\n${output}`);
  return value;
}

export interface LoadTime {
  /** Median time a fresh process takes to import the bundle. */
  loadMs: number;
  /** The same of the bare bundle, loaded in turn with it (so that both see the machine alike). */
  bareMs: number;
}

/** The load time of the bundle at `file` and of the bare one at `bare`, measured in turn, `runs` times each. */
export async function loadTimeMs(file: string, bare: string): Promise<LoadTime> {
  const samples: number[] = [];
  const bareSamples: number[] = [];
  for (let run = 0; run < runs; run++) {
    samples.push(await loadOnceMs(file));
    bareSamples.push(await loadOnceMs(bare));
  }
  return { loadMs: median(samples), bareMs: median(bareSamples) };
}

/**
 * The baseline: a bundle, built like the functions, that only creates the DynamoDB document client. Written
 * into `directory`; its index.mjs's path is returned.
 */
export async function buildBareBundle(projectRoot: string, directory: string): Promise<string> {
  const entry = join(directory, 'bare.ts');
  await writeFile(
    entry,
    [
      "import { DynamoDBClient } from '@aws-sdk/client-dynamodb';",
      "import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';",
      'const client = DynamoDBDocumentClient.from(new DynamoDBClient({}));',
      "export const handler = () => client.send(new GetCommand({ TableName: 'bench', Key: { pk: 'x', sk: 'y' } }));",
    ].join('\n'),
  );
  const outfile = join(directory, 'index.mjs');
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'node',
    target: 'node22',
    mainFields: ['module', 'main'],
    nodePaths: [join(projectRoot, 'node_modules')],
    banner: { js: "import{createRequire}from'node:module';const require=createRequire(import.meta.url);" },
    logLevel: 'error',
  });
  return outfile;
}
