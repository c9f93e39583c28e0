import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import templateBundleSchema from '../core/api/validators/template-bundle.cjs';
import { clientIdOf } from '../core/auth/principals.ts';
import { parseYamlBody } from '../core/api/yaml-body.ts';
import { publishNextVersion } from '../core/templates/catalogue.ts';

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
