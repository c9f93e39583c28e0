/**
 * Fault injection for in-process invocations: every AWS call this test process makes (the table
 * and the queues through the SDK, the payload bucket through store/signed-fetch.ts) goes through one check, which, inside a `traced`
 * scope, records what the scope wrote and, when a fault plan is set, fails the k-th write (`fail`:
 * the store errs once, the code goes on) or stops the function right before its (k+1)-th write
 * (`kill`: that call and every later one fail, as if the process died there, so no clean-up runs).
 * Scopes are per async context, so cases run concurrently without seeing each other's faults.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { db } from '#functions/core/store/dynamo.ts';
import { s3 } from '#functions/core/store/payloads.ts';
import type { SignedFetch } from '#functions/core/store/signed-fetch.ts';
import { sqs } from '#functions/core/store/queues.ts';

export type FaultMode = 'kill' | 'fail';

export interface FaultPlan {
  mode: FaultMode;
  /** The write (1-based, in the order the code issues them) the fault is about. */
  at: number;
}

/** What one scope wrote: the table keys it put, updated or deleted, and the messages it sent. */
export interface Trace {
  keys: Map<string, { pk: string; sk: string }>;
  sent: Array<{ queueUrl: string; body: string; deduplicationId?: string }>;
  /** Writes issued by the invocation under a plan (or counting), in order. */
  writes: number;
  plan?: FaultPlan;
  /** Set once a `kill` plan fired: every later call fails. */
  dead: boolean;
}

/** Thrown in place of a call after the simulated crash, or by the failing write. */
export class InjectedFault extends Error {}

const scopes = new AsyncLocalStorage<Trace>();

const writeCommands = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'TransactWriteItemsCommand',
  'BatchWriteItemCommand',
  'SendMessageCommand',
  'SendMessageBatchCommand',
]);

/** A key attribute as the document client or the low-level client gives it. */
const text = (value: unknown): string =>
  typeof value === 'object' && value !== null && 'S' in value ? String((value as { S: unknown }).S) : String(value);

type Keyed = { pk?: unknown; sk?: unknown } | undefined;

function keysOf(commandName: string, input: Record<string, unknown>): Keyed[] {
  const items = input.TransactItems as Array<Record<string, { Item?: Keyed; Key?: Keyed }>> | undefined;
  if (commandName === 'TransactWriteItemsCommand') {
    return (items ?? []).flatMap((item) => (item.ConditionCheck ? [] : Object.values(item).map((op) => op.Item ?? op.Key)));
  }
  if (commandName === 'BatchWriteItemCommand') {
    const requests = Object.values(input.RequestItems as Record<string, Array<Record<string, { Item?: Keyed; Key?: Keyed }>>>);
    return requests.flat().map((request) => request.PutRequest?.Item ?? request.DeleteRequest?.Key);
  }
  return [(input.Item ?? input.Key) as Keyed];
}

function record(trace: Trace, commandName: string, input: Record<string, unknown>): void {
  if (commandName === 'SendMessageCommand') {
    trace.sent.push({ queueUrl: String(input.QueueUrl), body: String(input.MessageBody) });
    return;
  }
  if (commandName === 'SendMessageBatchCommand') {
    for (const entry of input.Entries as Array<{ MessageBody: string; MessageDeduplicationId?: string }>) {
      trace.sent.push({
        queueUrl: String(input.QueueUrl),
        body: entry.MessageBody,
        deduplicationId: entry.MessageDeduplicationId,
      });
    }
    return;
  }
  for (const key of keysOf(commandName, input)) {
    if (key?.pk !== undefined && key.sk !== undefined) {
      const pk = text(key.pk);
      const sk = text(key.sk);
      trace.keys.set(`${pk}\u0000${sk}`, { pk, sk });
    }
  }
}

type Handler = (args: { input: object }) => Promise<unknown>;

/** Runs `call` (a write when `isWrite`) as the scope's plan says: counted, failed, or never after the stop. */
async function underPlan<T>(isWrite: boolean, call: () => Promise<T>, recordWrite: (trace: Trace) => void): Promise<T> {
  const trace = scopes.getStore();
  if (!trace) return call();
  if (trace.dead) throw new InjectedFault('the function was stopped');
  if (!isWrite) return call();
  if (trace.plan) {
    trace.writes += 1;
    if (trace.plan.mode === 'kill' && trace.writes > trace.plan.at) {
      trace.dead = true;
      throw new InjectedFault('the function was stopped');
    }
    if (trace.plan.mode === 'fail' && trace.writes === trace.plan.at) throw new InjectedFault('the store failed');
  }
  const result = await call();
  recordWrite(trace);
  return result;
}

/** An initialize-step middleware, the same for the SDK's clients (hence the casts where it is added). */
const faultInjection = (next: Handler, context: { commandName?: string }) => (args: { input: object }) => {
  const name = context.commandName ?? '';
  return underPlan(
    writeCommands.has(name),
    () => next(args),
    (trace) => record(trace, name, args.input as Record<string, unknown>),
  );
};

/** The payload bucket's requests (store/signed-fetch.ts): a PUT or DELETE is a write. */
function faultInjectedFetch(fetch: SignedFetch['fetch']): SignedFetch['fetch'] {
  return (input, init) => {
    const method = init.method;
    return underPlan(
      method === 'PUT' || method === 'DELETE',
      () => fetch(input, init),
      () => undefined,
    );
  };
}

let installed = false;

/** Puts the middleware on this process's clients (once); the three stacks take the same middleware. */
export function installFaultInjection(): void {
  if (installed) return;
  installed = true;
  const options = { step: 'initialize', name: 'faultInjection', priority: 'high' } as const;
  db().middlewareStack.add(faultInjection as never, options);
  sqs().middlewareStack.add(faultInjection as never, options);
  const bucket = s3();
  bucket.fetch = faultInjectedFetch(bucket.fetch.bind(bucket));
}

export const newTrace = (): Trace => ({ keys: new Map(), sent: [], writes: 0, dead: false });

/**
 * A trace of one invocation inside a case: what it writes goes to the case's trace, but its plan,
 * count and death are its own. A stopped invocation stays stopped: work it left in flight (the
 * other branches of a Promise.all) cannot write after it, as it could not after a real crash.
 */
export const invocationTrace = (caseTrace: Trace, plan?: FaultPlan): Trace => ({
  keys: caseTrace.keys,
  sent: caseTrace.sent,
  writes: 0,
  dead: false,
  plan,
});

/** Runs `work` in `trace`'s scope; with `plan` set on the trace, its writes are counted and faulted. */
export function traced<T>(trace: Trace, work: () => Promise<T>): Promise<T> {
  return scopes.run(trace, work);
}

/** Runs `cases` with at most `width` at a time. */
export async function inParallel<T>(cases: Array<() => Promise<T>>, width = 4): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const lane = async () => {
    for (let index = next++; index < cases.length; index = next++) results[index] = await (cases[index] as () => Promise<T>)();
  };
  await Promise.all(Array.from({ length: width }, lane));
  return results;
}
