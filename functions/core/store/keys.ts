/**
 * Key builders for every item in the table, named after the access pattern they serve.
 * Tenant-scoped keys always start with `TENANT#<id>`, the id coming from the authenticated token.
 */

/** Zero-padded so that index sort keys order numerically. */
const sortable = (id: number) => id.toString().padStart(12, '0');

export const keys = {
  /** Global counters (ids of clients and tenants). */
  counter: (name: string) => ({ pk: 'COUNTER', sk: name }),

  client: (clientId: number) => ({ pk: `CLIENT#${clientId}`, sk: 'CLIENT' }),
  /** Index entry listing every client, for the admin CLI. */
  clientsIndex: (clientId: number) => ({ gsi1pk: 'CLIENTS', gsi1sk: sortable(clientId) }),

  /** Resolves a bearer token from its SHA-256 with one GetItem. */
  token: (tokenHash: string) => ({ pk: `TOKEN#${tokenHash}`, sk: 'TOKEN' }),

  tenant: (tenantId: number) => ({ pk: `TENANT#${tenantId}`, sk: 'TENANT' }),
  /** Index entry listing a client's live tenants; removed on delete so the index stays sparse. */
  clientTenantsIndex: (clientId: number, tenantId: number) => ({
    gsi1pk: `CLIENT#${clientId}#TENANTS`,
    gsi1sk: sortable(tenantId),
  }),
  /** Kept after a soft delete for billing. */
  tenantDeletionRecord: (tenantId: number) => ({ pk: `TENANT#${tenantId}`, sk: 'BILLING#DELETED' }),

  template: (clientId: number, templateId: number) => ({ pk: `CLIENT#${clientId}`, sk: `TEMPLATE#${templateId}` }),

  /** One per (caller, route, Idempotency-Key); expires after 24 hours. */
  idempotency: (scope: string, keyHash: string) => ({ pk: `IDEMPOTENCY#${scope}#${keyHash}`, sk: 'IDEMPOTENCY' }),
} as const;
