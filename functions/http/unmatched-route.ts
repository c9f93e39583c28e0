import { httpHandler } from '#functions/core/api/http-handler.ts';
import { unmatched } from '#functions/core/api/unmatched.ts';

/** API Gateway's `$default` route (the twin's fallback): 404 for an unknown path, 405 with Allow for another method. */
export const handler = httpHandler(async ({ method, path }) => {
  throw unmatched(method, path);
});
