import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import templateBundleSchema from '#functions/core/api/validators/template-bundle.cjs';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { parseYamlBody } from '#functions/core/api/yaml-body.ts';
import { publishNextVersion } from '#functions/core/templates/catalogue.ts';

export const handler = httpHandler(
  async (request) => ({
    status: 200,
    body: {
      status: 'success',
      data: await publishNextVersion(clientIdOf(request.principal), idParameter(request, 'id'), request.body),
    },
  }),
  { body: templateBundleSchema, yaml: parseYamlBody },
);
