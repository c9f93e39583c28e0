import { httpHandler } from '#functions/core/api/http-handler.ts';
import setDefaultTemplateSchema from '#functions/core/api/validators/set-default-template.cjs';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { setDefaultTemplate } from '#functions/core/templates/catalogue.ts';

export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 200,
    body: { status: 'success', data: await setDefaultTemplate(clientIdOf(principal), body.templateId) },
  }),
  { body: setDefaultTemplateSchema },
);
