import type { SendMessageBatchCommandInput, SQSClient } from '@aws-sdk/client-sqs';

/** What fauxqs puts before every error code it names in `x-amzn-query-error`. */
const fauxqsPrefix = 'AWS.SimpleQueueService.';

type MessageAttributes = NonNullable<NonNullable<SendMessageBatchCommandInput['Entries']>[number]['MessageAttributes']>;

/**
 * A message's size as SQS counts it against the limit (sqsMessageBytes): its body's UTF-8 bytes,
 * and each message attribute's name, type and value (a binary value by its bytes).
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-message-metadata.html
 */
export function sqsMessageSize(body: string | undefined, attributes: MessageAttributes = {}): number {
  let bytes = Buffer.byteLength(body ?? '', 'utf8');
  for (const [name, attribute] of Object.entries(attributes)) {
    bytes += Buffer.byteLength(name, 'utf8') + Buffer.byteLength(attribute.DataType ?? '', 'utf8');
    if (attribute.StringValue !== undefined) bytes += Buffer.byteLength(attribute.StringValue, 'utf8');
    if (attribute.BinaryValue !== undefined) bytes += attribute.BinaryValue.byteLength;
  }
  return bytes;
}

interface SqsError {
  name?: string;
  message?: string;
  Code?: string;
  Error?: { Code?: string; Message?: string };
}

/**
 * fauxqs refuses what SQS refuses over the size limit (a message over its queue's
 * MaximumMessageSize, a SendMessageBatch over 1 MiB in all), but answers a little differently,
 * which this middleware on a client of the twin's queues puts right:
 * - fauxqs names every error code with SQS's `AWS.SimpleQueueService.` prefix, which SQS gives
 *   only its own modeled errors (BatchRequestTooLong, NonExistentQueue…; the SDK names those by
 *   their model, prefix or not). A common error such as an over-size message's
 *   InvalidParameterValue comes from SQS bare: the SDK's error is then named `InvalidParameterValue`,
 *   not `AWS.SimpleQueueService.InvalidParameterValue`.
 * - SQS's BatchRequestTooLong also says how many bytes the batch had: "… You have sent N bytes."
 * Installed once per client.
 */
export function answerLikeSqs(client: SQSClient): void {
  if (corrected.has(client)) return;
  corrected.add(client);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      try {
        return await next(args);
      } catch (thrown) {
        const error = thrown as SqsError;
        if (typeof error?.name === 'string' && error.name.startsWith(fauxqsPrefix)) {
          const code = error.name.slice(fauxqsPrefix.length);
          error.name = code;
          if (error.Code !== undefined) error.Code = code;
          if (error.Error?.Code !== undefined) error.Error.Code = code;
        }
        if (
          context.commandName === 'SendMessageBatchCommand' &&
          error?.name === 'BatchRequestTooLong' &&
          error.message !== undefined &&
          !error.message.includes('You have sent')
        ) {
          const entries = (args.input as SendMessageBatchCommandInput).Entries ?? [];
          const sent = entries.reduce((sum, entry) => sum + sqsMessageSize(entry.MessageBody, entry.MessageAttributes), 0);
          error.message = `${error.message} You have sent ${sent} bytes.`;
          if (error.Error?.Message !== undefined) error.Error.Message = error.message;
        }
        throw thrown;
      }
    },
    { step: 'initialize', name: 'twinAnswersLikeSqs' },
  );
}

const corrected = new WeakSet<SQSClient>();
