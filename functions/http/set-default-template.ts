import { httpHandler } from '../core/api/http-handler.ts';
import setDefaultTemplateSchema from '../core/api/validators/set-default-template.cjs';
import { clientIdOf } from '../core/auth/principals.ts';
import { setDefaultTemplate } from '../core/templates/catalogue.ts';

export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 200,
    body: { status: 'success', data: await setDefaultTemplate(clientIdOf(principal), body.templateId) },
  }),
  { body: setDefaultTemplateSchema },
);
