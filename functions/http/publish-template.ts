import { httpHandler } from '#functions/core/api/http-handler.ts';
import templateBundleSchema from '#functions/core/api/validators/template-bundle.cjs';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { parseYamlBody } from '#functions/core/api/yaml-body.ts';
import { publishTemplate, type PublishedTemplate } from '#functions/core/templates/catalogue.ts';

const created = (template: PublishedTemplate) => ({ status: 201, body: { status: 'success', data: template } });

export const handler = httpHandler(
  async ({ principal, body, idempotency }) =>
    created(await publishTemplate(clientIdOf(principal), body, idempotency.resumable(created))),
  { body: templateBundleSchema, yaml: parseYamlBody },
);
