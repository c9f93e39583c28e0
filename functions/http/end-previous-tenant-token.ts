import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { endPreviousTenantToken } from '#functions/core/tenants/tenants.ts';

/** Ends the tenant token the last rotation kept working; none left is a success too (`ended: false`). */
export const handler = httpHandler(async (request) => ({
  status: 200,
  body: { status: 'success', data: await endPreviousTenantToken(clientIdOf(request.principal), idParameter(request, 'id')) },
}));
