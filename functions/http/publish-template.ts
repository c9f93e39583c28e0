import { httpHandler } from '#functions/core/api/http-handler.ts';
import templateBundleSchema from '#functions/core/api/validators/template-bundle.cjs';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { parseYamlBody } from '#functions/core/api/yaml-body.ts';
import { publishTemplate } from '#functions/core/templates/catalogue.ts';

export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 201,
    body: { status: 'success', data: await publishTemplate(clientIdOf(principal), body) },
  }),
  { body: templateBundleSchema, yaml: parseYamlBody },
);
