/** Every request-body schema, by the name the route table uses. */
import createTenant from './create-tenant.schema.json' with { type: 'json' };
import deleteTenant from './delete-tenant.schema.json' with { type: 'json' };

export const requestSchemas = {
  'create-tenant': createTenant,
  'delete-tenant': deleteTenant,
} as const;

export type RequestSchemaName = keyof typeof requestSchemas;
