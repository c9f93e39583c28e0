/** Every request-body schema, by the name the route table uses. */
import applyTemplate from './apply-template.schema.json' with { type: 'json' };
import createAgent from './create-agent.schema.json' with { type: 'json' };
import createTenant from './create-tenant.schema.json' with { type: 'json' };
import deleteTenant from './delete-tenant.schema.json' with { type: 'json' };
import reload from './reload.schema.json' with { type: 'json' };
import reportRun from './report-run.schema.json' with { type: 'json' };
import setDefaultTemplate from './set-default-template.schema.json' with { type: 'json' };
import templateBundle from './template-bundle.schema.json' with { type: 'json' };

export const requestSchemas = {
  'apply-template': applyTemplate,
  'create-agent': createAgent,
  'create-tenant': createTenant,
  'delete-tenant': deleteTenant,
  reload,
  'report-run': reportRun,
  'set-default-template': setDefaultTemplate,
  'template-bundle': templateBundle,
} as const;

export type RequestSchemaName = keyof typeof requestSchemas;

/** The export name of a schema's generated validator (`create-tenant` → `createTenant`). */
export const validatorName = (schemaName: RequestSchemaName | string) =>
  schemaName.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase());
