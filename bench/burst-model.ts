/**
 * A model of a top-of-the-hour burst on AWS: it takes the per-schedule cost the burst bench
 * measured on the twin (DynamoDB and SQS requests per fired schedule) and the stack's settings,
 * applies request latencies and service limits documented by AWS (each with its source), and gives
 * the wall time from the slot until the last schedule of the burst fired. Pure arithmetic: no I/O.
 */

export interface BurstModelInput {
  due: number;
  /** Measured on the twin: requests per fired schedule, the tick's and the fire workers' together. */
  dynamoPerFire: number;
  sqsPerFire: number;
  dueShards: number;
  duePageSize: number;
  fireConcurrency: number;
  /** Fire-queue messages per worker invocation, and schedules per message. */
  batchSize: number;
  schedulesPerMessage: number;
}

/** What the model assumes of AWS; docs/schedules.md and bench/results.md list the sources. */
export const awsAssumptions = {
  /** One DynamoDB request (GetItem, UpdateItem, a BatchGetItem or BatchWriteItem page): single-digit ms, rounded up. */
  dynamoRequestMs: 10,
  /** One Query page of up to 1 MB from an index. */
  dynamoPageMs: 30,
  /** One SQS SendMessageBatch. */
  sqsRequestMs: 20,
  /** Event source mapping hand-over and invocation, per batch of a warm worker. */
  invocationOverheadMs: 30,
  /** Requests one worker has in flight at once: the SDK's default of 50 sockets per client. */
  socketsPerWorker: 50,
  /** Steps one worker takes in turn per batch: reads, flows, sends, runs, claims (two rounds of 50 for 100). */
  sequentialSteps: { dynamo: 5, sqs: 2 },
  /** The event source mapping starts 5 concurrent batches, and adds up to 300 a minute. */
  initialConcurrency: 5,
  concurrencyAddedPerSecond: 300 / 60,
  /** Writes a second one partition of the table or of an index takes. */
  partitionWriteUnitsPerSecond: 1000,
  /** A fire rewrites its schedule's index entry: the old one goes, the new one comes (items under 1 KB: 1 WCU each). */
  indexWriteUnitsPerFire: 2,
  /** The table's own writes per fire: the claim (UpdateItem) and the run (BatchWriteItem), items under 1 KB. */
  tableWriteUnitsPerFire: 2,
  /** EventBridge starts a rate(1 minute) rule's target within the minute; assumed this many seconds after it. */
  tickStartSeconds: 5,
} as const;

export interface BurstModel {
  /** Wall time of one worker batch, and the fires a second one worker sustains. */
  batchMs: number;
  firesPerSecondPerWorker: number;
  /** Fires a second the workers sustain at full concurrency, and what the due index's shards take. */
  computeFiresPerSecond: number;
  indexFiresPerSecond: number;
  /** The lower of the two, and which one binds. */
  firesPerSecond: number;
  binding: 'fire workers' | 'due-index shards';
  /** The tick listing the burst, from its start. */
  listingSeconds: number;
  /** From the tick's start until the last schedule fired (the workers start on the first page). */
  firingSeconds: number;
  /** Slot to last fire: the tick's start after the slot, then the firing. */
  lastFireSeconds: number;
  /** Table write units a second the burst needs at that rate (the table must be warm to it). */
  tableWriteUnitsPerSecond: number;
}

export function burstModel(input: BurstModelInput, aws = awsAssumptions): BurstModel {
  const perBatch = input.batchSize * input.schedulesPerMessage;
  const requestTimeMs = perBatch * (input.dynamoPerFire * aws.dynamoRequestMs + input.sqsPerFire * aws.sqsRequestMs);
  const stepsMs = aws.sequentialSteps.dynamo * aws.dynamoRequestMs + aws.sequentialSteps.sqs * aws.sqsRequestMs;
  const batchMs = Math.max(requestTimeMs / aws.socketsPerWorker, stepsMs) + aws.invocationOverheadMs;
  const firesPerSecondPerWorker = (perBatch / batchMs) * 1000;
  const computeFiresPerSecond = firesPerSecondPerWorker * input.fireConcurrency;
  const indexFiresPerSecond = (input.dueShards * aws.partitionWriteUnitsPerSecond) / aws.indexWriteUnitsPerFire;
  const firesPerSecond = Math.min(computeFiresPerSecond, indexFiresPerSecond);
  // Each shard's pages go one after the other: a Query, then its messages sent in parallel.
  const pagesPerShard = Math.ceil(input.due / input.dueShards / input.duePageSize);
  const listingSeconds = (pagesPerShard * (aws.dynamoPageMs + aws.sqsRequestMs)) / 1000;
  // Concurrency ramps up from the event source's start; the index's shards cap the rate whatever it is.
  let fired = 0;
  let seconds = (aws.dynamoPageMs + aws.sqsRequestMs) / 1000;
  const step = 0.1;
  while (fired < input.due) {
    const concurrency = Math.min(input.fireConcurrency, aws.initialConcurrency + aws.concurrencyAddedPerSecond * seconds);
    fired += Math.min(concurrency * firesPerSecondPerWorker, indexFiresPerSecond) * step;
    seconds += step;
  }
  const firingSeconds = Math.max(seconds, listingSeconds);
  return {
    batchMs,
    firesPerSecondPerWorker,
    computeFiresPerSecond,
    indexFiresPerSecond,
    firesPerSecond,
    binding: computeFiresPerSecond <= indexFiresPerSecond ? 'fire workers' : 'due-index shards',
    listingSeconds,
    firingSeconds,
    lastFireSeconds: aws.tickStartSeconds + firingSeconds,
    tableWriteUnitsPerSecond: firesPerSecond * (aws.tableWriteUnitsPerFire + aws.indexWriteUnitsPerFire),
  };
}
