/**
 * The DynamoDB requests an operation makes, as sent (the low-level input, after the document
 * client's marshalling) with their levels, and their replay without anything around them: the
 * floor a route can reach is its own requests, level after level, with no HTTP, handler or code
 * of ours in between.
 */
import {
  BatchGetItemCommand,
  DynamoDBClient,
  GetItemCommand,
  QueryCommand,
  type BatchGetItemCommandInput,
  type GetItemCommandInput,
  type QueryCommandInput,
} from '@aws-sdk/client-dynamodb';
import { InvokeStore } from '@aws/lambda-invoke-store';
import { isTokenUseStamp } from '#functions/core/auth/token-use.ts';
import { config } from '#functions/core/config.ts';
import { db } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { depthOf, type Interval } from './round-trips.ts';

/** One request an operation sent, and when. */
export interface RecordedRequest extends Interval {
  command: string;
  input: unknown;
  /** The Lambda invocation (request id) that sent it: the twin runs its workers in this process too. */
  invocation: string;
}

/** The requests of one operation, by level: those of a level were sent together, each level after the one before. */
export type RequestLevels = RecordedRequest[][];

/** Sorts recorded requests into levels (a request's level is the longest chain of requests it waited for, itself included). */
export function levelsOf(requests: readonly RecordedRequest[]): RequestLevels {
  const byStart = [...requests].sort((a, b) => a.start - b.start);
  const levels: RequestLevels = [];
  byStart.forEach((request, index) => {
    const level = depthOf(byStart.slice(0, index + 1).filter((earlier) => earlier === request || earlier.end <= request.start));
    (levels[level - 1] ??= []).push(request);
  });
  return levels;
}

/** Whether a request is a bearer token's lookup: the first request of every authenticated route (a read's, beside its first reads). */
export const isTokenLookup = (request: RecordedRequest) =>
  request.command === 'GetItemCommand' &&
  ((request.input as { Key?: { pk?: { S?: string } } }).Key?.pk?.S ?? '').startsWith(stored.token.partitionPrefix({}));

/**
 * Runs `operation` (one request to an authenticated route of the twin, started in this process)
 * once and returns the DynamoDB requests that route's invocation sent, as the client sent them:
 * those of the invocation whose token lookup came first. The twin's queue workers, which run in
 * this process too, may send requests meanwhile (the loads a reload queued): they are not the route's.
 */
export async function recordRequests(operation: () => Promise<unknown>): Promise<RecordedRequest[]> {
  const store = await InvokeStore.getInstanceAsync(true);
  const recorded: RecordedRequest[] = [];
  const name = `bench-record-${crypto.randomUUID()}`;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      // A token's use stamp (at most once a minute per token, beside the route's requests) is no request of the route's.
      if (isTokenUseStamp(args.input)) return next(args);
      // At this step the input is the low-level one (the document client marshals before it).
      const request: RecordedRequest = {
        command: context.commandName ?? 'unknown',
        input: structuredClone(args.input),
        invocation: store.getRequestId(),
        start: performance.now(),
        end: Number.POSITIVE_INFINITY,
      };
      recorded.push(request);
      try {
        return await next(args);
      } finally {
        request.end = performance.now();
      }
    },
    { step: 'serialize', name },
  );
  try {
    await operation();
  } finally {
    db().middlewareStack.remove(name);
  }
  const invocation = recorded.find(isTokenLookup)?.invocation;
  return recorded.filter((request) => request.invocation === invocation);
}

let client: DynamoDBClient | undefined;

/** A client of its own for the replays, configured as the functions' one (db()). */
const replayClient = () => (client ??= new DynamoDBClient({ endpoint: config().dynamodbEndpoint, maxAttempts: 5 }));

function send(request: RecordedRequest): Promise<unknown> {
  if (request.command === 'GetItemCommand') return replayClient().send(new GetItemCommand(request.input as GetItemCommandInput));
  if (request.command === 'QueryCommand') return replayClient().send(new QueryCommand(request.input as QueryCommandInput));
  if (request.command === 'BatchGetItemCommand') {
    return replayClient().send(new BatchGetItemCommand(request.input as BatchGetItemCommandInput));
  }
  throw new Error(`A read route sent ${request.command}: only reads are replayed`);
}

/** Sends the levels again: each level's requests together, each level once the one before has answered. */
export async function replay(levels: RequestLevels): Promise<void> {
  for (const level of levels) await Promise.all(level.map(send));
}
