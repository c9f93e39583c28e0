/** Every request-body schema, by the name the route table uses. */
import createTenant from './create-tenant.schema.json' with { type: 'json' };
import deleteTenant from './delete-tenant.schema.json' with { type: 'json' };

export const requestSchemas = {
  'create-tenant': createTenant,
  'delete-tenant': deleteTenant,
} as const;

export type RequestSchemaName = keyof typeof requestSchemas;

/** The export name of a schema's generated validator (`create-tenant` → `createTenant`). */
export const validatorName = (schemaName: RequestSchemaName | string) =>
  schemaName.replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase());
