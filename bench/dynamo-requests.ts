import { GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { hashToken } from '#functions/core/auth/tokens.ts';
import { db, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { median } from './round-trips.ts';

export interface DynamoRequestCosts {
  /** The token lookup alone: what the baseline route pays. */
  oneMs: number;
  /** The token lookup and a one-partition query, one after the other. */
  twoInSequenceMs: number;
  /** The same two, started together: whether this machine overlaps them, as DynamoDB does. */
  twoInParallelMs: number;
}

const samples = 2000;

async function medianMs(operation: () => Promise<unknown>): Promise<number> {
  for (let index = 0; index < samples / 2; index++) await operation(); // warm-up
  const times: number[] = [];
  for (let index = 0; index < samples; index++) {
    const started = performance.now();
    await operation();
    times.push(performance.now() - started);
  }
  return median(times);
}

/**
 * What DynamoDB requests cost on this machine, without HTTP or handlers: whether two requests
 * started together overlap (on DynamoDB they do; DynamoDB Local may work through them in turn),
 * which is what the read routes' latency against the baseline comes down to.
 */
export async function measureDynamoRequests(tenantToken: string, tenantId: number): Promise<DynamoRequestCosts> {
  const lookup = () =>
    db().send(
      new GetCommand({
        TableName: tableName(),
        Key: stored.token.key({ tokenHash: hashToken(tenantToken) }),
        ConsistentRead: true,
      }),
    );
  const query = () =>
    db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': stored.tenant.partition({ tenantId }) },
        Limit: 20,
      }),
    );
  return {
    oneMs: await medianMs(lookup),
    twoInSequenceMs: await medianMs(async () => {
      await lookup();
      await query();
    }),
    twoInParallelMs: await medianMs(() => Promise.all([lookup(), query()])),
  };
}
