import { httpHandler } from '../core/api/http-handler.ts';
import templateBundleSchema from '../core/api/validators/template-bundle.cjs';
import { clientIdOf } from '../core/auth/principals.ts';
import { parseYamlBody } from '../core/api/yaml-body.ts';
import { publishTemplate } from '../core/templates/catalogue.ts';

export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 201,
    body: { status: 'success', data: await publishTemplate(clientIdOf(principal), body) },
  }),
  { body: templateBundleSchema, yaml: parseYamlBody },
);
