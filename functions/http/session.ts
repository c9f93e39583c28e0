import { httpHandler } from '#functions/core/api/http-handler.ts';
import { unauthorized } from '#functions/core/errors.ts';
import { readSession } from '#functions/core/sso/sessions.ts';

/** GET /auth/session: who the BI session cookie belongs to, and the UI flags (what the BI front end reads). */
export const handler = httpHandler(async (request) => {
  const session = await readSession(request.cookies, request.host);
  if (!session) throw unauthorized('No valid session', 'Cookie');
  return { status: 200, body: { status: 'success', data: session } };
});
