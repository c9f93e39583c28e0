import { httpHandler, wholeListParameters } from '#functions/core/api/http-handler.ts';
import { listAnswer } from '#functions/core/api/whole-list.ts';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { listAgentViews } from '#functions/core/agents/agents.ts';

/** The tenant's agents: every one, or a page with `limit`. */
export const handler = httpHandler(async (request) => {
  const { limit, cursor } = wholeListParameters(request);
  const page = await listAgentViews(tenantIdOf(request.principal), limit, cursor);
  return { status: 200, body: listAnswer(page, limit) };
});
