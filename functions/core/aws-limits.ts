/**
 * The limits AWS applies where the twin cannot see them, each with the page that states it. The
 * functions size their answers and bounds from these, the stack configures its resources with them
 * and the twin refuses exactly what AWS refuses (local/gateway.ts, local/queues.ts,
 * local/queue-limits.ts): a test per limit shows it (test/integration/aws-limits-*.test.ts).
 */

/**
 * Lambda refuses a synchronous invocation whose request (the event, as JSON) or response (the
 * result object `{statusCode, headers, body…}`, as JSON) is over 6 MB, counted as 6 MiB here
 * (its own error message names 6,291,556 bytes; the smaller bound is the one to stay under).
 * https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html (Invocation payload)
 * https://docs.aws.amazon.com/lambda/latest/dg/API_Invoke.html
 */
export const lambdaSyncPayloadBytes = 6 * 1024 * 1024;

/**
 * Lambda refuses an asynchronous invocation (InvocationType Event: EventBridge rules, S3 events)
 * over 1 MB. No function of ours invokes another; the schedule ticks EventBridge sends are a few
 * hundred bytes.
 * https://docs.aws.amazon.com/lambda/latest/dg/API_Invoke.html
 */
export const lambdaAsyncPayloadBytes = 1024 * 1024;

/**
 * An HTTP API refuses a request body over 10 MB with its own 413, before any function runs.
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html (Payload size)
 */
export const httpApiPayloadBytes = 10 * 1024 * 1024;

/**
 * An HTTP API refuses a request whose request line and header values together are over 10,240 bytes.
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html
 * (Total combined size of request line and header values)
 */
export const httpApiRequestLineAndHeaderBytes = 10_240;

/**
 * An HTTP API waits 30 seconds at most for its integration, then answers 503 itself; every
 * function times out before (routeTimeoutSeconds), so a slow function is a 500, never this.
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/http-api-quotas.html (Maximum integration timeout)
 */
export const httpApiIntegrationTimeoutSeconds = 30;

/**
 * SQS refuses a message (body and attributes) over the queue's MaximumMessageSize, at most 1 MiB;
 * the stack sets every queue to that most, and the twin's queues are created the same. A batch's
 * messages may not add up to more either.
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/quotas-messages.html
 * https://docs.aws.amazon.com/AWSSimpleQueueService/latest/APIReference/API_SendMessageBatch.html
 */
export const sqsMessageBytes = 1024 * 1024;

/**
 * DynamoDB refuses an item over 400 KB (names and values, UTF-8), a transaction of more than 100
 * actions or over 4 MB. DynamoDB Local enforces each (test/integration/aws-limits-dynamodb.test.ts).
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html
 */
export const dynamoItemBytes = 400 * 1024;
export const dynamoTransactionItems = 100;
export const dynamoTransactionBytes = 4 * 1024 * 1024;

/** What API Gateway answers itself (no function ran, or its result could not be used): status and body. */
export const gatewayAnswers = {
  /** A body over httpApiPayloadBytes. */
  payloadTooLarge: { status: 413, body: { message: 'Request Entity Too Large' } },
  /**
   * Request line and headers over httpApiRequestLineAndHeaderBytes. The quota page states the limit
   * but not the answer: the twin answers 431, HTTP's status for it.
   */
  headersTooLarge: { status: 431, body: { message: 'Request Header Fields Too Large' } },
  /** The function failed, timed out, or Lambda refused its event or its result (over lambdaSyncPayloadBytes). */
  integrationFailed: { status: 500, body: { message: 'Internal Server Error' } },
  /** No answer within httpApiIntegrationTimeoutSeconds. */
  integrationTimedOut: { status: 503, body: { message: 'Service Unavailable' } },
} as const;
