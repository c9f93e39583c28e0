import { randomUUID } from 'node:crypto';
import { InvokeStore, InvokeStoreBase } from '@aws/lambda-invoke-store';
import type { Context } from 'aws-lambda';

/**
 * The twin runs many invocations at once in one process, as Lambda does on a multi-concurrency
 * environment. Declaring that (AWS_LAMBDA_MAX_CONCURRENCY) and running each invocation inside the
 * runtime's InvokeStore makes Powertools keep each invocation's log keys (request id, tenant id,
 * function name) to itself instead of sharing one logger state across handlers.
 */
const invokeStore = InvokeStore.getInstanceAsync(true).then((store) => {
  // Declared only once the store exists: Powertools refuses to run with the one and not the other.
  process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '64';
  return store;
});

/** The context Lambda hands a function, for the twin's in-process invocations. */
export function lambdaContext(functionName: string, timeoutMs: number): Context {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/** Invokes a handler as Lambda would: with its context, inside an invocation of its own. */
export async function invoke<Event, Result>(
  handler: (event: Event, context: Context) => Promise<Result>,
  event: Event,
  functionName: string,
  timeoutMs: number,
): Promise<Result> {
  const context = lambdaContext(functionName, timeoutMs);
  const store = await invokeStore;
  return store.run({ [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId }, () => handler(event, context));
}
