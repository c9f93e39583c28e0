import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
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

/** One message on a standard queue, or on `url` when given (a DLQ); `body` is sent as messageBody gives it. */
export async function sendMessage(name: QueueName, body: unknown, url = queueUrl(name)): Promise<void> {
  await sqs().send(new SendMessageCommand({ QueueUrl: url, MessageBody: messageBody(body) }));
}

export interface FifoMessage {
  deduplicationId: string;
  body: unknown;
}

/**
 * Sends messages to one FIFO message group, in order (SendMessageBatch keeps the order of its
 * entries within a group). Throws when any entry is refused, so callers never report a load as
 * enqueued that is not.
 */
export async function sendToFifoGroup(name: QueueName, groupId: string, messages: readonly FifoMessage[]): Promise<void> {
  for (let start = 0; start < messages.length; start += 10) {
    const chunk = messages.slice(start, start + 10);
    const result = await sqs().send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl(name),
        Entries: chunk.map((message, index) => ({
          Id: String(index),
          MessageGroupId: groupId,
          MessageDeduplicationId: message.deduplicationId,
          MessageBody: messageBody(message.body),
        })),
      }),
    );
    if (result.Failed?.length) {
      throw new Error(`SQS refused ${result.Failed.length} message(s): ${result.Failed.map((entry) => entry.Code).join(', ')}`);
    }
  }
}
