import { httpHandler } from '#functions/core/api/http-handler.ts';
import reloadSchema from '#functions/core/api/validators/reload.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { requestReload } from '#functions/core/reload/reload.ts';

/** Spec 4.5: `{success: true, results: [{tokenId, tenantId, status}]}`, one per item in request order. */
export const handler = httpHandler(
  async ({ principal, body, requestId }) => ({
    status: 200,
    body: { success: true, results: await requestReload(tenantIdOf(principal), body.items, requestId) },
  }),
  { body: reloadSchema },
);
