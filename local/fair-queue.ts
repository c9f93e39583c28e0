import {
  ChangeMessageVisibilityBatchCommand,
  type Message,
  ReceiveMessageCommand,
  type SendMessageBatchCommandInput,
  type SendMessageBatchCommandOutput,
  type SendMessageCommandInput,
  type SendMessageCommandOutput,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/** A message the queue holds in flight, and when it becomes visible again (ms). */
export interface InFlightMessage {
  messageId: string;
  receiptHandle: string;
  visibleAt: number;
}

/**
 * The tenant (MessageGroupId) of each message sent to the twin's queues, by message id: fauxqs
 * accepts MessageGroupId on a standard queue but keeps no trace of it, so the twin notes it as the
 * functions send. A message it does not know (sent by another process, a test's) counts as a tenant
 * of its own, as SQS counts a message without a group.
 */
export interface MessageGroups {
  /** Notes the groups of what `client` sends from now on (once per client). */
  track(client: SQSClient): void;
  of(messageId: string | undefined): string | undefined;
  /** The message is gone (deleted): its group is not needed any more. */
  forget(messageId: string | undefined): void;
}

export function messageGroups(): MessageGroups {
  const groups = new Map<string, string>();
  const tracked = new WeakSet<SQSClient>();
  return {
    track(client) {
      if (tracked.has(client)) return;
      tracked.add(client);
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const result = await next(args);
          if (context.commandName === 'SendMessageCommand') {
            const group = (args.input as SendMessageCommandInput).MessageGroupId;
            const id = (result.output as SendMessageCommandOutput).MessageId;
            if (group && id) groups.set(id, group);
          }
          if (context.commandName === 'SendMessageBatchCommand') {
            const entries = (args.input as SendMessageBatchCommandInput).Entries ?? [];
            for (const sent of (result.output as SendMessageBatchCommandOutput).Successful ?? []) {
              const group = entries.find((entry) => entry.Id === sent.Id)?.MessageGroupId;
              if (group && sent.MessageId) groups.set(sent.MessageId, group);
            }
          }
          return result;
        },
        { step: 'initialize', name: 'twinMessageGroups' },
      );
    },
    of: (messageId) => (messageId === undefined ? undefined : groups.get(messageId)),
    forget: (messageId) => {
      if (messageId !== undefined) groups.delete(messageId);
    },
  };
}

/**
 * SQS fair queues' noisy-neighbour rule (Amazon SQS Developer Guide, "How Amazon SQS fair queues
 * work"): a tenant is noisy when it holds more than 10% of the messages in flight and at least 30
 * of them, or more than 10% of the consumers' recent processing time.
 */
export const noisyShare = 0.1;
export const noisyInFlight = 30;
/** How far back "recent" processing time goes on the twin (SQS does not say). */
export const processingWindowMs = 60_000;
/** A noisy tenant that sent nothing for this long is quiet again, as in SQS. */
export const quietAfterMs = 5 * 60_000;

/**
 * Receives running at once to fill the buffer. fauxqs hands out at most 10 messages a receive, in
 * arrival order: behind thousands of visible messages (a noisy tenant's deferrals coming back), one
 * loop would reach a quiet tenant's new message only after hundreds of receives in a row, a wait
 * SQS's fair queues, which order the whole backlog themselves, do not have.
 */
const receivers = 4;
/** Messages the twin holds back from fauxqs to order them; beyond this many the backlog further back waits its turn. */
const bufferLimit = 20_000;
/**
 * How long a buffered message stays hidden in fauxqs: the twin hands it out long before (and
 * releases what it holds when it stops), then hides it for the queue's own visibility timeout.
 */
const reservedSeconds = 43_200;

interface Buffered {
  message: Message;
  /** Its tenant; a message without a group is a tenant of its own, as in SQS. */
  group: string;
  sentAt: number;
}

export interface FairQueueOptions {
  sqs: SQSClient;
  queueUrl: string;
  /** The queue's visibility timeout: a message handed out is hidden this long, as if just received. */
  visibilityTimeoutSeconds: number;
  /** What fauxqs holds in flight now (the twin's queues read it in process). */
  inFlight: () => InFlightMessage[];
  groups: MessageGroups;
}

export interface FairQueue {
  /** Up to `max` messages, quiet tenants' first; none if none comes within about a second. */
  take(max: number): Promise<Message[]>;
  /** The consumer spent `ms` on these messages (one batch). */
  processed(messages: readonly Message[], ms: number): void;
  /** Messages it holds back, waiting to be handed out. */
  waiting(): number;
  /** Stops receiving and makes the messages it still holds visible again. */
  stop(): Promise<void>;
}

/**
 * The order a fair queue hands out its backlog: quiet tenants' messages first, oldest first; then
 * the noisy tenants', the one with the fewest messages in flight first. Pure: `noisy` is decided
 * by the caller.
 */
export function fairOrder<T extends { group: string }>(
  waiting: readonly T[],
  noisy: ReadonlySet<string>,
  inFlight: ReadonlyMap<string, number>,
  max: number,
): T[] {
  const picked = waiting.filter((entry) => !noisy.has(entry.group)).slice(0, max);
  if (picked.length === max) return picked;
  const noisyWaiting = waiting.filter((entry) => noisy.has(entry.group));
  const rank = (entry: T) => inFlight.get(entry.group) ?? 0;
  // A stable sort: within a tenant, and between tenants as loaded, oldest first.
  return [...picked, ...[...noisyWaiting].sort((a, b) => rank(a) - rank(b)).slice(0, max - picked.length)];
}

/** The tenants the rule calls noisy, from the messages in flight and the recent processing time per tenant. */
export function noisyTenants(inFlight: ReadonlyMap<string, number>, processingMs: ReadonlyMap<string, number>): Set<string> {
  const totalInFlight = [...inFlight.values()].reduce((sum, count) => sum + count, 0);
  const totalMs = [...processingMs.values()].reduce((sum, ms) => sum + ms, 0);
  const noisy = new Set<string>();
  for (const [group, count] of inFlight) {
    if (count >= noisyInFlight && count > noisyShare * totalInFlight) noisy.add(group);
  }
  for (const [group, ms] of processingMs) if (totalMs > 0 && ms > noisyShare * totalMs) noisy.add(group);
  return noisy;
}

/**
 * The twin's fair queue, in front of a fauxqs standard queue (which hands messages out in arrival
 * order, and drops MessageGroupId: `MessageGroups` keeps it). It receives the queue's visible messages as they come and
 * keeps them hidden in fauxqs, then hands them to the poller's batches in SQS's fair order: the
 * tenants fauxqs holds most in flight (deferred and retried messages included, as in SQS) or that
 * took most of the poller's recent time are noisy, and wait while others' messages are there. A
 * tenant stays noisy until none of its messages waits, or it sent none for 5 minutes.
 */
export function startFairQueue(options: FairQueueOptions): FairQueue {
  const { sqs, queueUrl } = options;
  const groupOf = (messageId: string | undefined) => options.groups.of(messageId) ?? `message:${messageId}`;
  const buffer: Buffered[] = [];
  const processing: Array<{ at: number; group: string; ms: number }> = [];
  const noisy = new Set<string>();
  let stopped = false;
  // Whoever waits for the buffer to change (the batches for messages, the receiver for room).
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  const changeOrTimeout = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      waiters.add(done);
    });

  const receiveLoop = async () => {
    while (!stopped) {
      if (buffer.length >= bufferLimit) {
        await changeOrTimeout(1000);
        continue;
      }
      try {
        const received = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: 1,
            VisibilityTimeout: reservedSeconds,
            MessageSystemAttributeNames: ['All'],
            MessageAttributeNames: ['All'],
          }),
        );
        for (const message of received.Messages ?? []) {
          buffer.push({
            message,
            group: groupOf(message.MessageId),
            sentAt: Number(message.Attributes?.SentTimestamp ?? Date.now()),
          });
        }
        if (received.Messages?.length) wake();
      } catch (error) {
        console.error(`fair queue ${queueUrl}: receive failed`, error);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  };
  const fill = Promise.all(Array.from({ length: receivers }, receiveLoop));

  /** Messages in flight per tenant: what fauxqs hides, less what waits here. */
  const inFlightByGroup = (now: number) => {
    const waiting = new Set(buffer.map((entry) => entry.message.ReceiptHandle));
    const counts = new Map<string, number>();
    for (const entry of options.inFlight()) {
      if (entry.visibleAt <= now || waiting.has(entry.receiptHandle)) continue;
      const group = groupOf(entry.messageId);
      counts.set(group, (counts.get(group) ?? 0) + 1);
    }
    return counts;
  };

  const processingByGroup = (now: number) => {
    while (processing.length > 0 && (processing[0]?.at ?? now) < now - processingWindowMs) processing.shift();
    const totals = new Map<string, number>();
    for (const entry of processing) totals.set(entry.group, (totals.get(entry.group) ?? 0) + entry.ms);
    return totals;
  };

  const choose = (max: number): Buffered[] => {
    const now = Date.now();
    const inFlight = inFlightByGroup(now);
    const lastSent = new Map<string, number>();
    for (const entry of buffer) lastSent.set(entry.group, Math.max(lastSent.get(entry.group) ?? 0, entry.sentAt));
    for (const group of noisyTenants(inFlight, processingByGroup(now))) noisy.add(group);
    for (const group of noisy) {
      const sent = lastSent.get(group);
      // Its backlog drained, or nothing new from it for 5 minutes: quiet again.
      if (sent === undefined || now - sent > quietAfterMs) noisy.delete(group);
    }
    return fairOrder(buffer, noisy, inFlight, max);
  };

  /** Hides messages handed out for the queue's visibility timeout from now, as a receive would. */
  const hide = async (entries: readonly Buffered[], seconds: number) => {
    for (let start = 0; start < entries.length; start += 10) {
      await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: queueUrl,
          Entries: entries.slice(start, start + 10).map((entry, index) => ({
            Id: String(index),
            ReceiptHandle: entry.message.ReceiptHandle,
            VisibilityTimeout: seconds,
          })),
        }),
      );
    }
  };

  return {
    async take(max) {
      if (buffer.length === 0 && !stopped) await changeOrTimeout(1000);
      if (stopped || buffer.length === 0) return [];
      const picked = choose(max);
      const taken = new Set(picked);
      let kept = 0;
      for (const entry of buffer) if (!taken.has(entry)) buffer[kept++] = entry;
      buffer.length = kept;
      wake();
      // Handed out all the same if this fails: the consumer deletes them or sets their visibility itself.
      await hide(picked, options.visibilityTimeoutSeconds).catch((error: unknown) => {
        console.error(`fair queue ${queueUrl}: could not hide the messages handed out`, error);
      });
      return picked.map((entry) => entry.message);
    },
    processed(messages, ms) {
      const at = Date.now();
      for (const message of messages) processing.push({ at, group: groupOf(message.MessageId), ms: ms / messages.length });
    },
    waiting: () => buffer.length,
    async stop() {
      stopped = true;
      wake();
      // The receive under way is not cut short: fauxqs would still hand its messages to a closed
      // connection, hidden for hours. It ends within its second of waiting, and what it got is released too.
      await fill;
      await hide(buffer.splice(0), 0).catch(() => undefined);
    },
  };
}
