import { SendMessageBatchCommand, type SendMessageBatchCommandInput, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { deadLetterUrlVariable, type QueueName, queueUrlVariable } from './queue-definitions.ts';

let client: SQSClient | undefined;

/** The SQS client, created once per cold start; SQS_ENDPOINT is set only off AWS (fauxqs). */
export function sqs(): SQSClient {
  client ??= new SQSClient({ endpoint: process.env.SQS_ENDPOINT || undefined, maxAttempts: 5 });
  return client;
}

export function queueUrl(name: QueueName): string {
  const url = process.env[queueUrlVariable(name)];
  if (!url) throw new Error(`Missing required environment variable ${queueUrlVariable(name)}`);
  return url;
}

/** The URL of a queue's DLQ, for a consumer that moves messages there itself. */
export function deadLetterQueueUrl(name: QueueName): string {
  const url = process.env[deadLetterUrlVariable(name)];
  if (!url) throw new Error(`Missing required environment variable ${deadLetterUrlVariable(name)}`);
  return url;
}

/**
 * A message body: JSON with every non-ASCII UTF-16 code unit escaped as `\uXXXX` (a surrogate pair
 * as two escapes), the same value once parsed, in characters every queue accepts (SQS refuses
 * U+FFFE and U+FFFF, fauxqs any character beyond U+FFFF, e.g. an emoji in an alert's name).
 */
export function messageBody(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * A message on a fair queue: its body (sent as messageBody gives it) and its tenant, the
 * `MessageGroupId` by which SQS tells a noisy tenant from the quiet ones and serves the quiet first.
 */
export interface TenantMessage {
  tenantId: number;
  body: unknown;
}

/** The message group of a tenant's messages on a fair queue. */
export const tenantGroup = (tenantId: number) => `tenant-${tenantId}`;

/**
 * A message of a client's own (its events' deliveries), in the client's message group: one busy
 * integrator is served after the quiet ones, as a tenant is.
 */
export interface ClientMessage {
  clientId: number;
  body: unknown;
}

/** The message group of a client's own messages on a fair queue (never a tenant's: the prefixes differ). */
export const clientGroup = (clientId: number) => `client-${clientId}`;

const groupOf = (message: TenantMessage | ClientMessage) =>
  'clientId' in message ? clientGroup(message.clientId) : tenantGroup(message.tenantId);

/** One message on a fair (standard) queue, in its tenant's (or client's) message group. */
export async function sendMessage(name: QueueName, message: TenantMessage | ClientMessage): Promise<void> {
  await sqs().send(
    new SendMessageCommand({
      QueueUrl: queueUrl(name),
      MessageBody: messageBody(message.body),
      MessageGroupId: groupOf(message),
    }),
  );
}

export interface FifoMessage {
  deduplicationId: string;
  body: unknown;
}

type BatchEntry = NonNullable<SendMessageBatchCommandInput['Entries']>[number];

/** One SendMessageBatch (at most 10 entries). Throws when any entry is refused, so no caller reports a message sent that is not. */
async function sendBatch(name: QueueName, entries: BatchEntry[]): Promise<void> {
  const result = await sqs().send(new SendMessageBatchCommand({ QueueUrl: queueUrl(name), Entries: entries }));
  if (result.Failed?.length) {
    throw new Error(`SQS refused ${result.Failed.length} message(s): ${result.Failed.map((entry) => entry.Code).join(', ')}`);
  }
}

const tens = <T>(items: readonly T[]): T[][] =>
  Array.from({ length: Math.ceil(items.length / 10) }, (_, index) => items.slice(index * 10, index * 10 + 10));

/** Many messages on a fair (standard) queue, each in its tenant's group, ten to a SendMessageBatch, the batches sent in parallel. */
export async function sendBatches(name: QueueName, messages: readonly TenantMessage[]): Promise<void> {
  await Promise.all(
    tens(messages).map((chunk) =>
      sendBatch(
        name,
        chunk.map((message, index) => ({
          Id: String(index),
          MessageBody: messageBody(message.body),
          MessageGroupId: tenantGroup(message.tenantId),
        })),
      ),
    ),
  );
}

/**
 * Sends messages to one FIFO message group, in order (SendMessageBatch keeps the order of its
 * entries within a group, and the batches go one after the other).
 */
export async function sendToFifoGroup(name: QueueName, groupId: string, messages: readonly FifoMessage[]): Promise<void> {
  for (const chunk of tens(messages)) {
    await sendBatch(
      name,
      chunk.map((message, index) => ({
        Id: String(index),
        MessageGroupId: groupId,
        MessageDeduplicationId: message.deduplicationId,
        MessageBody: messageBody(message.body),
      })),
    );
  }
}
