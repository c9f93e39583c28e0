import { httpHandler } from '#functions/core/api/http-handler.ts';
import reloadSchema from '#functions/core/api/validators/reload.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { requestReload } from '#functions/core/reload/reload.ts';

/**
 * Spec 4.5: `{success: true, results: [{tokenId, tenantId, status}]}`, one per item in request order.
 * The batch id is the request key: a retry with the same Idempotency-Key sends loads with the same
 * deduplication ids, which SQS (within 5 minutes) and the reload worker's markers (after) absorb.
 */
export const handler = httpHandler(
  async ({ principal, body, idempotency, requestId }) => ({
    status: 200,
    body: {
      success: true,
      results: await requestReload(tenantIdOf(principal), body.items, idempotency.requestKey, requestId),
    },
  }),
  { body: reloadSchema },
);
