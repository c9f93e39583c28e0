/**
 * A model of noisy neighbours on AWS, in the style of burst-model.ts: what a quiet tenant waits for
 * beside a tenant whose webhook receiver never answers, or beside a tenant with thousands of
 * schedules due in the same minute, from the stack's settings, the deliverer's and the fire
 * worker's request counts, and limits AWS documents (each with its source in bench/results.md).
 * It also gives the same wait without this measures (one standard queue in arrival order,
 * no per-endpoint limit, a tenant's schedules on one shard), for contrast. Pure arithmetic: no I/O.
 */
import { awsAssumptions, type BurstModel } from './burst-model.ts';

export const noisyAssumptions = {
  ...awsAssumptions,
  /** What a healthy receiver takes to answer a webhook over the internet. */
  receiverAnswerMs: 100,
  /** Spec 8: the receiver has 10 seconds; one that never answers holds its attempt that long. */
  receiverTimeoutMs: 10_000,
  /** SQS fair queues: a tenant is noisy with more than this share of the messages in flight, and at least this many. */
  fairShare: 0.1,
  fairInFlight: 30,
  /** Writes a second one tenant's partition takes (claims and runs of its schedules live there). */
  tenantPartitionWriteUnitsPerSecond: 1000,
} as const;

export interface WebhookModelInput {
  noisyAlerts: number;
  maxInFlight: number;
  stallsToOpen: number;
  batchSize: number;
}

export interface WebhookModel {
  /** The quiet tenant's delivery path: hand-over, reads, slot, POST, release, record. */
  aloneMs: number;
  /** Batches the noisy endpoint can hold at once (its attempts in flight), and how long its breaker takes to open. */
  heldBatches: number;
  openAfterSeconds: number;
  /** A batch that only defers noisy messages (reads, visibility changes). */
  deferralBatchMs: number;
  /** When the fair queue sees the noisy tenant: once it holds 30 messages in flight. */
  noisyDetectedMs: number;
  /** The quiet tenant's delivery beside the noisy one: the path, plus waiting for a batch that is not held. */
  besideMs: number;
  withinBudget: boolean;
  /** Without fair queues or endpoint limits: waiting behind the noisy backlog, each of its batches held 10 s. */
  withoutMeasuresSeconds: number;
}

/** Batches an event source mapping runs `seconds` after messages appear: 5, then up to 300 more a minute. */
const batchesAt = (seconds: number, aws = noisyAssumptions) => aws.initialConcurrency + aws.concurrencyAddedPerSecond * seconds;

export function webhookModel(input: WebhookModelInput, aws = noisyAssumptions): WebhookModel {
  // Reads (delivery, settings, endpoint) in parallel, the slot claimed, the POST, the slot released, the attempt recorded.
  const aloneMs = aws.invocationOverheadMs + 3 * aws.dynamoRequestMs + aws.receiverAnswerMs + 2 * aws.dynamoRequestMs;
  if (input.noisyAlerts === 0) {
    return {
      aloneMs,
      heldBatches: 0,
      openAfterSeconds: 0,
      deferralBatchMs: 0,
      noisyDetectedMs: 0,
      besideMs: aloneMs,
      withinBudget: true,
      withoutMeasuresSeconds: aloneMs / 1000,
    };
  }
  const heldBatches = Math.min(input.maxInFlight, aws.initialConcurrency);
  const openAfterSeconds = (Math.ceil(input.stallsToOpen / input.maxInFlight) * aws.receiverTimeoutMs) / 1000;
  // Reads in parallel, then every message's visibility changed in parallel.
  const deferralBatchMs = aws.invocationOverheadMs + aws.dynamoRequestMs + aws.sqsRequestMs;
  const freeBatches = aws.initialConcurrency - heldBatches;
  const noisyDetectedMs = Math.ceil(aws.fairInFlight / input.batchSize / freeBatches) * deferralBatchMs;
  // Served first once detected: it waits for the next free batch to finish its deferrals, at worst one whole one.
  const besideMs = aloneMs + deferralBatchMs;
  // Before: one queue in arrival order, each noisy batch held for the time-out; the event source ramps up meanwhile.
  const ahead = Math.ceil(input.noisyAlerts / input.batchSize);
  let served = 0;
  let seconds = 0;
  while (served < ahead) {
    served += batchesAt(seconds, aws) / (aws.receiverTimeoutMs / 1000);
    seconds += 1;
  }
  return {
    aloneMs,
    heldBatches,
    openAfterSeconds,
    deferralBatchMs,
    noisyDetectedMs,
    besideMs,
    withinBudget: besideMs <= 2 * aloneMs + 1000,
    withoutMeasuresSeconds: seconds + aloneMs / 1000,
  };
}

export interface ScheduleModelInput {
  quietDue: number;
  /** Schedules of each quiet tenant (their turns in the due index). */
  quietSchedulesEach: number;
  /** Schedule ids per block of one shard (schedule-repository.ts). */
  shardBlockSize: number;
  noisyDue: number;
  dueShards: number;
  duePageSize: number;
  /** Due schedules the tick lists, over all shards, before it sends any (dispatcher.ts: firstListingSchedules). */
  firstListing: number;
  fireConcurrency: number;
  batchSize: number;
  schedulesPerMessage: number;
  /** The burst model's worker: one batch's time. */
  burst: Pick<BurstModel, 'batchMs'>;
  /** Table writes of one fire on its tenant's partition: the claim and the run. */
  tenantWriteUnitsPerFire: number;
}

export interface ScheduleModel {
  aloneSeconds: number;
  /** Pages the busiest shard reads before the tick's first send (all its pages while the whole listing fits). */
  firstListingPages: number;
  /**
   * Pages that shard reads after the first send, where a quiet tenant's entry may be: its turns may
   * come after every one of the noisy tenant's there (the twin's rounds draw them anywhere in the block).
   */
  pagesAhead: number;
  /** A worker busy with a batch of the noisy tenant, bound by that tenant's partition shared by every such worker. */
  noisyBatchSeconds: number;
  besideSeconds: number;
  withinBudget: boolean;
  /** The noisy tenant's own last fire: its partition's write rate binds it. */
  noisyLastSeconds: number;
  /** Without spreading and fair queues: the noisy tenant on one shard, listed and fired ahead of its shard's quiet tenants. */
  withoutMeasuresSeconds: number;
}

export function scheduleModel(input: ScheduleModelInput, aws = noisyAssumptions): ScheduleModel {
  const pageSeconds = (aws.dynamoPageMs + aws.sqsRequestMs) / 1000;
  const batchSeconds = input.burst.batchMs / 1000;
  const aloneSeconds = aws.tickStartSeconds + pageSeconds + batchSeconds;
  const noisyBlocksPerShard = Math.ceil(input.noisyDue / (input.dueShards * input.shardBlockSize));
  const quietTenantsPerShard = Math.ceil(input.quietDue / input.quietSchedulesEach / input.dueShards);
  const shardEntries =
    Math.min(input.noisyDue, noisyBlocksPerShard * input.shardBlockSize) + quietTenantsPerShard * input.quietSchedulesEach;
  const shardPages = Math.ceil(shardEntries / input.duePageSize);
  const everyShardWhole = input.noisyDue + input.quietDue <= input.firstListing;
  const firstListingPages = everyShardWhole
    ? shardPages
    : Math.min(shardPages, Math.max(1, Math.ceil(input.firstListing / (input.dueShards * input.duePageSize))));
  const pagesAhead = shardPages - firstListingPages;
  const noisyFiresPerSecond = aws.tenantPartitionWriteUnitsPerSecond / input.tenantWriteUnitsPerFire;
  const perBatch = input.batchSize * input.schedulesPerMessage;
  // Every worker on a noisy batch shares the tenant's partition: each batch takes that long.
  const noisyBatchSeconds = Math.max(batchSeconds, (perBatch * input.fireConcurrency) / noisyFiresPerSecond);
  // Listed in the first send, it is queued before the noisy tenant's batches and served first; listed
  // after it, the fair queue still serves it first, but only once a worker finishes a noisy batch.
  const besideSeconds =
    aloneSeconds + (firstListingPages - 1) * pageSeconds + (pagesAhead > 0 ? pagesAhead * pageSeconds + noisyBatchSeconds : 0);
  const noisyLastSeconds = aws.tickStartSeconds + input.noisyDue / noisyFiresPerSecond;
  // Before: one shard listed the noisy tenant's entries first, and the queue handed them out first.
  const withoutMeasuresSeconds =
    aws.tickStartSeconds + Math.ceil(input.noisyDue / input.duePageSize) * pageSeconds + input.noisyDue / noisyFiresPerSecond;
  return {
    aloneSeconds,
    firstListingPages,
    pagesAhead,
    noisyBatchSeconds,
    besideSeconds,
    withinBudget: besideSeconds <= 2 * aloneSeconds + 1,
    noisyLastSeconds,
    withoutMeasuresSeconds,
  };
}
