/**
 * The route table. The CDK stack makes one Lambda function per row, the local twin's gateway
 * serves the same rows, and every handler looks its own row up by the API Gateway route key, so
 * a route's auth scheme, body schema and table access are stated here and nowhere else.
 */
import type { RequestSchemaName } from '../schemas/index.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Bearer token kinds a route accepts; an empty list means no authentication. */
export type AuthScheme = 'client' | 'tenant';

/** What the route's function may do to the table; the stack grants exactly this. */
export type TableAccess = 'none' | 'read' | 'readWrite';

export interface Route {
  method: HttpMethod;
  /** API Gateway path syntax: `{name}` matches one segment. */
  path: string;
  /** File under functions/http/ (without .ts) exporting `handler`. */
  handler: string;
  auth: readonly AuthScheme[];
  /** Request body schema under schemas/; a route without one takes no body. */
  body?: RequestSchemaName;
  table: TableAccess;
  /** Honours the Idempotency-Key header (POSTs that create things). */
  idempotent?: boolean;
  summary: string;
}

export const routes: readonly Route[] = [
  { method: 'GET', path: '/health', handler: 'health', auth: [], table: 'none', summary: 'Liveness check' },
  {
    method: 'GET',
    path: '/whoami',
    handler: 'whoami',
    auth: ['client', 'tenant'],
    table: 'read',
    summary: 'Who the bearer token belongs to (only the token lookup)',
  },
  {
    method: 'POST',
    path: '/tenants',
    handler: 'create-tenant',
    auth: ['client'],
    body: 'create-tenant',
    table: 'readWrite',
    idempotent: true,
    summary: 'Create a tenant (spec 4.1)',
  },
  {
    method: 'GET',
    path: '/tenants',
    handler: 'list-tenants',
    auth: ['client'],
    table: 'read',
    summary: "List the client's tenants",
  },
  {
    method: 'POST',
    path: '/tenants/delete',
    handler: 'delete-tenant',
    auth: ['client'],
    body: 'delete-tenant',
    table: 'readWrite',
    summary: 'Delete a tenant, compatibility form (spec 4.3)',
  },
  {
    method: 'DELETE',
    path: '/tenants',
    handler: 'delete-tenant',
    auth: ['client'],
    body: 'delete-tenant',
    table: 'readWrite',
    summary: 'Delete a tenant (spec 4.10)',
  },
  {
    method: 'POST',
    path: '/tenants/{id}/deactivate',
    handler: 'set-tenant-active',
    auth: ['client'],
    table: 'readWrite',
    summary: 'Deactivate a tenant',
  },
  {
    method: 'POST',
    path: '/tenants/{id}/activate',
    handler: 'set-tenant-active',
    auth: ['client'],
    table: 'readWrite',
    summary: 'Activate a tenant',
  },
  {
    method: 'POST',
    path: '/tenants/{id}/token',
    handler: 'rotate-tenant-token',
    auth: ['client'],
    table: 'readWrite',
    summary: "Rotate a tenant's token",
  },
  { method: 'GET', path: '/tenant', handler: 'get-tenant', auth: ['tenant'], table: 'read', summary: 'The tenant of the token' },
];

export const routeKey = (route: Pick<Route, 'method' | 'path'>) => `${route.method} ${route.path}`;

export function routeByKey(key: string): Route | undefined {
  return routes.find((route) => routeKey(route) === key);
}
