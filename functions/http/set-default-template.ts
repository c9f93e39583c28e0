import { httpHandler } from '../core/api/http-handler.ts';
import { clientIdOf } from '../core/auth/principals.ts';
import { setDefaultTemplate } from '../core/templates/catalogue.ts';

export const handler = httpHandler<{ templateId: number | null }>(async ({ principal, body }) => ({
  status: 200,
  body: { status: 'success', data: await setDefaultTemplate(clientIdOf(principal), body.templateId) },
}));
