/**
 * SQS's message size limit (sqsMessageBytes, functions/core/aws-limits.ts) on the twin's queues,
 * through the service's own send path (store/queues.ts): a message of exactly the limit is queued,
 * one byte more is refused as SQS refuses it, and so is a SendMessageBatch whose messages add up to
 * one byte over, on both kinds of queue the service has (standard fair queues, FIFO).
 *
 * The sends go to a fauxqs of this file's own, whose queues startLocalQueues makes exactly as it
 * makes the shared twin's (the shared twin's pollers would hand the messages accepted here to its
 * workers), through the functions' SQS client with the middleware the twin installs on it
 * (local/queue-limits.ts); the first test shows the shared twin's queues carry the same limit.
 *
 * What fauxqs answers (node_modules/fauxqs/dist/sqs/actions/sendMessage.js, sendMessageBatch.js):
 * - SendMessage over the queue's MaximumMessageSize: 400, "One or more parameters are invalid.
 *   Reason: Message must be shorter than 1048576 bytes.", as SQS, but coded
 *   `AWS.SimpleQueueService.InvalidParameterValue` where SQS says `InvalidParameterValue` (the
 *   name the SDK gives the error): the twin's middleware puts the name right;
 * - SendMessageBatch whose messages add up to more than 1 MiB (fauxqs's constant, which is also
 *   every queue's MaximumMessageSize here): 400 BatchRequestTooLong, "Batch requests cannot be
 *   longer than 1048576 bytes.", to which SQS adds "You have sent N bytes.", and so does the
 *   middleware. An entry alone over its queue's MaximumMessageSize in a batch under 1 MiB would be
 *   that entry's InvalidParameterValue in `Failed`, as in SQS; with both limits at 1 MiB there is none.
 * A message's size is, for both, its body's UTF-8 bytes plus each message attribute's name, type
 * and value.
 */
import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { sqsMessageBytes } from '#functions/core/aws-limits.ts';
import {
  deadLetterUrlVariable,
  type QueueName,
  queueDefinitions,
  queueUrlVariable,
} from '#functions/core/store/queue-definitions.ts';
import { messageBody, sendBatches, sendMessage, sendToFifoGroup, sqs } from '#functions/core/store/queues.ts';
import { answerLikeSqs, sqsMessageSize } from '#local/queue-limits.ts';
import { type LocalQueues, startLocalQueues } from '#local/queues.ts';

const queueNames = Object.keys(queueDefinitions) as QueueName[];
const fairQueues = queueNames.filter((name) => queueDefinitions[name].fair);
const fifoQueues = queueNames.filter((name) => queueDefinitions[name].fifo);

/** A message body the service sends (a JSON string, as messageBody writes it) of exactly `bytes` bytes. */
function bodyOfBytes(bytes: number): string {
  const body = 'x'.repeat(bytes - 2);
  expect(Buffer.byteLength(messageBody(body))).toBe(bytes);
  return body;
}

/** `count` bodies adding up to exactly `total` bytes as sent. */
const bodiesOfBytes = (total: number, count: number) =>
  Array.from({ length: count }, (_, index) => bodyOfBytes(Math.floor(total / count) + (index === count - 1 ? total % count : 0)));

const tooLong = {
  name: 'InvalidParameterValue',
  message: `One or more parameters are invalid. Reason: Message must be shorter than ${sqsMessageBytes} bytes.`,
  $metadata: { httpStatusCode: 400 },
};
/** SQS's answer to a batch of `sent` bytes, over the limit. */
const batchTooLong = (sent: number) => ({
  name: 'BatchRequestTooLong',
  message: `Batch requests cannot be longer than ${sqsMessageBytes} bytes. You have sent ${sent} bytes.`,
  $metadata: { httpStatusCode: 400 },
});

let queues: LocalQueues;
const variables = queueNames.flatMap((name) => [queueUrlVariable(name), deadLetterUrlVariable(name)]);
const saved: Record<string, string | undefined> = {};

beforeAll(async () => {
  queues = await startLocalQueues();
  // The service's send functions find the endpoint and the queues in the environment, as on AWS.
  for (const variable of ['SQS_ENDPOINT', ...variables]) saved[variable] = process.env[variable];
  process.env.SQS_ENDPOINT = queues.endpoint;
  for (const name of queueNames) {
    process.env[queueUrlVariable(name)] = queues.urls[name];
    process.env[deadLetterUrlVariable(name)] = queues.deadLetterUrls[name];
  }
  // As the twin does to the functions' client (local/queue-poller.ts).
  answerLikeSqs(sqs());
});

afterAll(async () => {
  sqs().destroy();
  for (const [variable, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[variable];
    else process.env[variable] = value;
  }
  await queues?.stop();
});

/** Messages a queue holds (visible), to show a refused send queued nothing. */
async function held(name: QueueName): Promise<number> {
  const { Attributes } = await sqs().send(
    new GetQueueAttributesCommand({ QueueUrl: queues.urls[name], AttributeNames: ['ApproximateNumberOfMessages'] }),
  );
  return Number(Attributes?.ApproximateNumberOfMessages);
}

test("every queue and DLQ of the shared twin, and of this file's, takes messages up to sqsMessageBytes", async () => {
  const shared = new SQSClient({ endpoint: inject('sqsEndpoint') });
  try {
    const limitOf = async (client: SQSClient, url: string) =>
      (await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['MaximumMessageSize'] }))).Attributes
        ?.MaximumMessageSize;
    const sharedUrls = [...Object.values(inject('queueUrls')), ...Object.values(inject('deadLetterQueueUrls'))];
    const ownUrls = [...Object.values(queues.urls), ...Object.values(queues.deadLetterUrls)];
    expect(sharedUrls).toHaveLength(2 * queueNames.length);
    expect(ownUrls).toHaveLength(2 * queueNames.length);
    for (const url of sharedUrls) expect(await limitOf(shared, url), url).toBe(String(sqsMessageBytes));
    for (const url of ownUrls) expect(await limitOf(sqs(), url), url).toBe(String(sqsMessageBytes));
  } finally {
    shared.destroy();
  }
});

test('fauxqs alone names an over-size message InvalidParameterValue with the prefix SQS does not give it', async () => {
  const bare = new SQSClient({ endpoint: queues.endpoint });
  try {
    await expect(
      bare.send(new SendMessageCommand({ QueueUrl: queues.urls.fire, MessageBody: 'x'.repeat(sqsMessageBytes + 1) })),
    ).rejects.toMatchObject({ ...tooLong, name: 'AWS.SimpleQueueService.InvalidParameterValue' });
  } finally {
    bare.destroy();
  }
});

describe.each(fairQueues)('the %s queue (standard, fair)', (name) => {
  test('SendMessage: exactly sqsMessageBytes is queued, one byte more refused with InvalidParameterValue', async () => {
    const before = await held(name);
    await sendMessage(name, { tenantId: 1, body: bodyOfBytes(sqsMessageBytes) });
    await expect(sendMessage(name, { tenantId: 1, body: bodyOfBytes(sqsMessageBytes + 1) })).rejects.toMatchObject(tooLong);
    expect(await held(name)).toBe(before + 1);
  });

  test('SendMessageBatch: ten messages adding up to sqsMessageBytes are queued, one byte more refused whole with BatchRequestTooLong', async () => {
    const before = await held(name);
    await sendBatches(
      name,
      bodiesOfBytes(sqsMessageBytes, 10).map((body) => ({ tenantId: 2, body })),
    );
    await expect(
      sendBatches(
        name,
        bodiesOfBytes(sqsMessageBytes + 1, 10).map((body) => ({ tenantId: 2, body })),
      ),
    ).rejects.toMatchObject(batchTooLong(sqsMessageBytes + 1));
    expect(await held(name)).toBe(before + 10);
  });
});

describe.each(fifoQueues)('the %s queue (FIFO)', (name) => {
  const send = (bodies: string[]) =>
    sendToFifoGroup(
      name,
      `limits-${randomUUID()}`,
      bodies.map((body) => ({ deduplicationId: randomUUID(), body })),
    );

  test('a message of exactly sqsMessageBytes is queued; one byte more is refused (a batch of one: BatchRequestTooLong)', async () => {
    const before = await held(name);
    await send([bodyOfBytes(sqsMessageBytes)]);
    await expect(send([bodyOfBytes(sqsMessageBytes + 1)])).rejects.toMatchObject(batchTooLong(sqsMessageBytes + 1));
    expect(await held(name)).toBe(before + 1);
  });

  test('messages adding up to sqsMessageBytes are queued, one byte more refused whole with BatchRequestTooLong', async () => {
    const before = await held(name);
    await send(bodiesOfBytes(sqsMessageBytes, 3));
    await expect(send(bodiesOfBytes(sqsMessageBytes + 1, 3))).rejects.toMatchObject(batchTooLong(sqsMessageBytes + 1));
    expect(await held(name)).toBe(before + 3);
  });

  test('SendMessage (not a path of ours on FIFO, SQS takes it): one byte over is InvalidParameterValue', async () => {
    const input = { QueueUrl: queues.urls[name], MessageGroupId: 'limits' };
    await sqs().send(
      new SendMessageCommand({ ...input, MessageDeduplicationId: randomUUID(), MessageBody: 'x'.repeat(sqsMessageBytes) }),
    );
    await expect(
      sqs().send(
        new SendMessageCommand({ ...input, MessageDeduplicationId: randomUUID(), MessageBody: 'x'.repeat(sqsMessageBytes + 1) }),
      ),
    ).rejects.toMatchObject(tooLong);
  });
});

test("message attributes count as SQS counts them: each one's name, type and value, in UTF-8", async () => {
  // None of the service's messages carries attributes; the twin counts them as SQS would all the same.
  const attributes = { 'tenant-ção': { DataType: 'String', StringValue: 'déjà' } };
  const attributeBytes = sqsMessageSize('', attributes);
  expect(attributeBytes).toBe(Buffer.byteLength('tenant-ção') + 'String'.length + Buffer.byteLength('déjà'));
  const send = (bytes: number) =>
    sqs().send(
      new SendMessageCommand({
        QueueUrl: queues.urls.webhook,
        MessageBody: 'x'.repeat(bytes - attributeBytes),
        MessageAttributes: attributes,
      }),
    );
  await send(sqsMessageBytes);
  await expect(send(sqsMessageBytes + 1)).rejects.toMatchObject(tooLong);
});
