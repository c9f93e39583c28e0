/**
 * The shapes of answers the API description names (a route row's `docs.answer`), by `$id`:
 * records inside the generic envelope, and the spec's own `{success: true, …}` answers.
 */
import applyTemplateAnswer from './apply-template-answer.schema.json' with { type: 'json' };
import datamart from './datamart.schema.json' with { type: 'json' };
import groupPermission from './group-permission.schema.json' with { type: 'json' };
import jwkSet from './jwk-set.schema.json' with { type: 'json' };
import loginAnswer from './login-answer.schema.json' with { type: 'json' };
import openapiDocument from './openapi-document.schema.json' with { type: 'json' };
import reloadAnswer from './reload-answer.schema.json' with { type: 'json' };
import revokeLoginAnswer from './revoke-login-answer.schema.json' with { type: 'json' };
import userPermission from './user-permission.schema.json' with { type: 'json' };

export const responseSchemas = {
  'apply-template-answer': applyTemplateAnswer,
  datamart,
  'group-permission': groupPermission,
  'jwk-set': jwkSet,
  'login-answer': loginAnswer,
  'openapi-document': openapiDocument,
  'reload-answer': reloadAnswer,
  'revoke-login-answer': revokeLoginAnswer,
  'user-permission': userPermission,
} as const;

export type ResponseSchemaName = keyof typeof responseSchemas;
