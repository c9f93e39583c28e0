import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { retryRun } from '#functions/core/reload/runs.ts';

/**
 * 202 with the load queued. The batch id is the request key, as a reload's: a retry with the same
 * Idempotency-Key sends the load with the same deduplication id, which SQS (within 5 minutes) and the
 * reload worker's markers (after) absorb.
 */
export const handler = httpHandler(async (request) => {
  const { principal, idempotency, requestId } = request;
  const retry = await retryRun(tenantIdOf(principal), idParameter(request, 'id'), idempotency.requestKey, requestId);
  return { status: 202, body: { status: 'success', data: retry } };
});
