import { httpHandler } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { listTemplates } from '#functions/core/templates/catalogue.ts';

/** Spec 4.2: `{status, data: [{id, nome}]}`. */
export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: { status: 'success', data: await listTemplates(clientIdOf(principal)) },
}));
