import { httpHandler } from '../core/api/http-handler.ts';
import templateBundleSchema from '../core/api/validators/template-bundle.cjs';
import { clientIdOf } from '../core/auth/principals.ts';
import type { TemplateBundle } from '../core/templates/bundle.ts';
import { parseYamlBody } from '../core/api/yaml-body.ts';
import { publishTemplate } from '../core/templates/catalogue.ts';

export const handler = httpHandler<TemplateBundle>(
  async ({ principal, body }) => ({
    status: 201,
    body: { status: 'success', data: await publishTemplate(clientIdOf(principal), body) },
  }),
  { body: templateBundleSchema, yaml: parseYamlBody },
);
