/**
 * The route table. The CDK stack makes one Lambda function per row, the local twin's gateway
 * serves the same rows, every handler looks its own row's run-time facts up by the API Gateway route
 * key (in route-facts.generated.ts, written from this table by `npm run generate`), and
 * tools/openapi/ describes the API from the rows alone, so a route's auth scheme, body schema,
 * table access, query parameters and documented answers are stated here and nowhere else.
 */
import type { RequestSchemaName } from '#schemas/index.ts';
import type { ResponseSchemaName } from '#schemas/responses/index.ts';
import { unmatchedRouteKey } from './core/api/route-matching.ts';
import type { QueueName } from './core/store/queue-definitions.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** Bearer token kinds a route accepts; an empty list means no authentication. */
export type AuthScheme = 'client' | 'tenant' | 'agent';

/** What the route's function may do to the table; the stack grants exactly this. */
export type TableAccess = 'none' | 'read' | 'readWrite';

/** A query parameter a route reads; httpHandler hands a handler only those its row declares. */
export interface QueryParameter {
  name: string;
  description: string;
  /**
   * An integer's range and default are what integerQueryParameter enforces (one without a default is
   * optional: absent means something of its own); other values reach the handler as sent.
   */
  schema:
    { type: 'integer'; minimum: number; maximum: number; default?: number } | { type: 'string' } | { enum: readonly string[] };
}

/** The query parameters of every paginated route (pageParameters reads them). */
export const pageQuery: readonly QueryParameter[] = [
  { name: 'limit', description: 'Page size.', schema: { type: 'integer', minimum: 1, maximum: 100, default: 50 } },
  { name: 'cursor', description: 'The `nextCursor` of the previous page.', schema: { type: 'string' } },
];

/**
 * The query parameters of the spec's lists that show no paging (datamarts, users, a datamart's
 * permission records): the whole list unless `limit` is sent (wholeListParameters reads them).
 */
export const wholeListQuery: readonly QueryParameter[] = [
  {
    name: 'limit',
    description:
      'Page size. Without it the answer is the whole list, exactly as the spec shows it (never silently fewer: a list ' +
      'too large for one answer, over 6 MB, is a 400 `answer_too_large` that says to send `limit`). With it, a page, ' +
      'and `nextCursor` beside `data` (null on the last page).',
    schema: { type: 'integer', minimum: 1, maximum: 100 },
  },
  { name: 'cursor', description: 'The `nextCursor` of the previous page.', schema: { type: 'string' } },
];

/** What a success answers, when not the generic envelope `{status: 'success', data}`. */
export type RouteAnswer =
  /** The envelope, its `data` one record of the schema (`list`: an array of them); `yaml`: also the bare record as YAML. */
  | { data: RequestSchemaName | ResponseSchemaName; list?: boolean; yaml?: boolean }
  /** Exactly the schema (the spec's own `{success: true, …}` answers), as JSON unless `mediaType` says otherwise. */
  | { schema: ResponseSchemaName; mediaType?: string }
  /** Text, in one of these media types. */
  | { text: readonly string[] }
  /** No body (a redirect). */
  | { none: true };

/** What only the API description says about a route: tools/openapi/ reads it, no function does. */
export interface RouteDocs {
  /** The success statuses and what each means, when not `200: Success.`. */
  success?: Readonly<Record<number, string>>;
  answer?: RouteAnswer;
  /** Headers of the success answers, with what each carries. */
  headers?: Readonly<Record<string, string>>;
  /** When it answers 304 Not Modified (without a body). */
  notModified?: string;
  /** A public route that still identifies its caller, though not with a bearer token: where the credential is, and how. */
  credential?: { in: 'cookie' | 'path'; note: string };
  /** Failures answered with an HTML page (a browser's route) rather than the error envelope, by status. */
  htmlErrors?: Readonly<Record<number, string>>;
}

export interface Route {
  method: HttpMethod;
  /** API Gateway path syntax: `{name}` matches one segment. */
  path: string;
  /** File under functions/http/ (without .ts) exporting `handler`. */
  handler: string;
  auth: readonly AuthScheme[];
  /** Request body schema under schemas/; a route without one takes no body. */
  body?: RequestSchemaName;
  /** Also accept the body as YAML (`application/yaml`). */
  yaml?: boolean;
  /** Queues the route's function sends to; the stack grants exactly these. */
  sends?: readonly QueueName[];
  table: TableAccess;
  /** Honours the Idempotency-Key header (POSTs that create things). */
  idempotent?: boolean;
  /** Reads the login-token signing keys. */
  signingKeys?: boolean;
  /** What the route's function may do in the payload bucket (webhook bodies too large for a queue message). */
  payloads?: 'read' | 'readWrite';
  /** A list answered by pages: `limit`, `cursor` and `nextCursor` (pageParameters refuses to run on any other route). */
  paginated?: boolean;
  /** The query parameters it reads besides pagination's. */
  query?: readonly QueryParameter[];
  /** Honours If-Match (the ETag of the version read; a stale one is a 412); ifMatchHeader refuses any other route. */
  ifMatch?: boolean;
  /**
   * Files of installed packages shipped beside the function's code and read at run time, not
   * bundled: large static files would otherwise sit in the code every cold start loads.
   */
  packageFiles?: readonly string[];
  summary: string;
  docs?: RouteDocs;
}

/**
 * What a function reads of its own row at run time (httpHandler). tools/route-facts.ts writes them
 * for every row to functions/core/api/route-facts.generated.ts, which the functions read instead
 * of this file: their bundles then carry neither the table's summaries nor its documentation.
 */
export interface RouteFacts extends Pick<Route, 'auth' | 'body' | 'yaml' | 'idempotent' | 'ifMatch'> {
  /** Every query parameter it reads (queryParametersOf), without the descriptions. */
  query?: ReadonlyArray<Pick<QueryParameter, 'name' | 'schema'>>;
}

/** A route anyone may call: it takes no bearer token (the edge lets it through without one, and limits it per address). */
export const takesNoToken = (route: Pick<Route, 'auth'>): boolean => route.auth.length === 0;

/**
 * Every route's function times out after this long (under API Gateway's 30-second integration
 * limit); the twin gives its invocations the same. Locks and idempotency claims a request takes
 * last until its function's deadline, so one whose holder died frees itself within this time.
 */
export const routeTimeoutSeconds = 15;

/** Force-send and fire both queue a webhook delivery of the alert. */
const queuesDelivery = {
  auth: ['tenant'],
  body: 'alert-delivery',
  table: 'readWrite',
  sends: ['webhook'],
  payloads: 'readWrite',
  idempotent: true,
  docs: { success: { 202: 'The delivery, queued.' }, answer: { data: 'delivery-queued' } },
} as const satisfies Partial<Route>;

/** A template's latest version, for If-Match on its deletion. */
const templateVersion = { ETag: "The template's latest version; send it back as If-Match." };

/** A tenant's version, for If-Match on its changes. */
const tenantVersion = { ETag: "The tenant's version; send it back as If-Match." };

/** A schedule file: JSON in the envelope, or the bare file as YAML (by Accept), with its version as ETag. */
const scheduleFile = { data: 'schedule.v2', yaml: true } as const satisfies RouteAnswer;
const scheduleVersion = { ETag: "The schedule's version; send it back as If-Match." };

export const routes: readonly Route[] = [
  {
    method: 'GET',
    path: '/health',
    handler: 'health',
    auth: [],
    table: 'none',
    summary: 'Liveness check',
    docs: { answer: { data: 'health' } },
  },
  {
    method: 'GET',
    path: '/openapi.json',
    handler: 'openapi',
    auth: [],
    table: 'none',
    summary: 'This API as an OpenAPI 3.1 document (generated from the route table and the schemas)',
    docs: { success: { 200: 'This document.' }, answer: { schema: 'openapi-document' } },
  },
  {
    method: 'GET',
    path: '/docs',
    handler: 'docs',
    auth: [],
    table: 'none',
    summary: 'The API documentation page (Swagger UI, served by the service itself)',
    docs: { success: { 200: 'An HTML page that renders this document with Swagger UI.' }, answer: { text: ['text/html'] } },
  },
  {
    method: 'GET',
    path: '/docs/{asset}',
    handler: 'docs-asset',
    auth: [],
    table: 'none',
    packageFiles: ['swagger-ui-dist/swagger-ui-bundle.js', 'swagger-ui-dist/swagger-ui.css'],
    summary: "A script or style sheet of the documentation page (a fixed allow-list of Swagger UI's files)",
    docs: {
      success: { 200: 'The file.' },
      answer: { text: ['text/javascript', 'text/css'] },
      notModified: 'Not modified: the `If-None-Match` ETag is the current one.',
    },
  },
  {
    method: 'GET',
    path: '/whoami',
    handler: 'whoami',
    auth: ['client', 'tenant'],
    table: 'read',
    summary: 'Who the bearer token belongs to (only the token lookup)',
    docs: { answer: { data: 'whoami' } },
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
    docs: {
      answer: { data: 'tenant-created' },
      success: { 201: 'The tenant, with its token (shown only here).' },
    },
  },
  {
    method: 'GET',
    path: '/tenants',
    handler: 'list-tenants',
    auth: ['client'],
    table: 'read',
    paginated: true,
    summary: "List the client's tenants",
    docs: { answer: { data: 'tenant-summary', list: true } },
  },
  {
    method: 'POST',
    path: '/tenants/delete',
    handler: 'delete-tenant',
    auth: ['client'],
    body: 'delete-tenant',
    table: 'readWrite',
    summary: 'Delete a tenant, compatibility form (spec 4.3)',
    docs: { answer: { data: 'done' } },
  },
  {
    method: 'DELETE',
    path: '/tenants',
    handler: 'delete-tenant',
    auth: ['client'],
    body: 'delete-tenant',
    table: 'readWrite',
    summary: 'Delete a tenant (spec 4.10)',
    docs: { answer: { data: 'done' } },
  },
  {
    method: 'POST',
    path: '/tenants/{id}/deactivate',
    handler: 'deactivate-tenant',
    auth: ['client'],
    table: 'readWrite',
    summary: 'Deactivate a tenant',
    docs: { answer: { data: 'tenant-summary' } },
  },
  {
    method: 'POST',
    path: '/tenants/{id}/activate',
    handler: 'activate-tenant',
    auth: ['client'],
    table: 'readWrite',
    summary: 'Activate a tenant',
    docs: { answer: { data: 'tenant-summary' } },
  },
  {
    method: 'GET',
    path: '/tenants/{id}',
    handler: 'get-client-tenant',
    auth: ['client'],
    table: 'read',
    summary: 'One of the client’s tenants: its development_variables, template, state and dates',
    docs: { answer: { data: 'tenant-detail' }, headers: tenantVersion },
  },
  {
    method: 'PATCH',
    path: '/tenants/{id}',
    handler: 'update-tenant',
    auth: ['client'],
    body: 'update-tenant',
    table: 'readWrite',
    ifMatch: true,
    summary: "Change a tenant's nome, development_variables or schedulingGranularity (If-Match guards against lost updates)",
    docs: { answer: { data: 'tenant-detail' }, headers: tenantVersion },
  },
  {
    method: 'POST',
    path: '/tenants/{id}/token',
    handler: 'rotate-tenant-token',
    auth: ['client'],
    table: 'readWrite',
    summary: "Rotate a tenant's token",
    docs: { answer: { data: 'token-rotated' } },
  },
  {
    method: 'GET',
    path: '/tenant',
    handler: 'get-tenant',
    auth: ['tenant'],
    table: 'read',
    summary: 'The tenant of the token, with its applications and desks',
    docs: { answer: { data: 'own-tenant' } },
  },
  {
    method: 'POST',
    path: '/tenants/templates',
    handler: 'publish-template',
    auth: ['client'],
    body: 'template-bundle',
    yaml: true,
    table: 'readWrite',
    idempotent: true,
    summary: 'Publish a new template (version 1)',
    docs: { answer: { data: 'template-published' }, success: { 201: 'The template, version 1.' } },
  },
  {
    method: 'GET',
    path: '/tenants/templates',
    handler: 'list-templates',
    auth: ['client'],
    table: 'read',
    summary: "List the client's templates (spec 4.2)",
    docs: { answer: { data: 'template-summary', list: true } },
  },
  {
    method: 'GET',
    path: '/tenants/templates/{id}',
    handler: 'get-template',
    auth: ['client'],
    table: 'read',
    summary: 'A template: its latest bundle and version history',
    docs: { answer: { data: 'template-detail' }, headers: templateVersion },
  },
  {
    method: 'DELETE',
    path: '/tenants/templates/{id}',
    handler: 'delete-template',
    auth: ['client'],
    table: 'readWrite',
    ifMatch: true,
    summary: "Delete a template and its versions (409 while it is the client's default; tenants keep what it applied)",
    docs: { answer: { data: 'done' } },
  },
  {
    method: 'PUT',
    path: '/tenants/templates/{id}',
    handler: 'publish-template-version',
    auth: ['client'],
    body: 'template-bundle',
    yaml: true,
    table: 'readWrite',
    summary: "Publish a template's next version",
    docs: { answer: { data: 'template-published' } },
  },
  {
    method: 'PUT',
    path: '/tenants/templates/default',
    handler: 'set-default-template',
    auth: ['client'],
    body: 'set-default-template',
    table: 'readWrite',
    summary: "Set or clear the client's default template",
    docs: { answer: { data: 'default-template' } },
  },
  {
    method: 'POST',
    path: '/tenant/templates/apply',
    handler: 'apply-template',
    auth: ['tenant'],
    body: 'apply-template',
    table: 'readWrite',
    summary: 'Apply a template to the tenant (spec 4.4)',
    docs: {
      success: { 200: 'Applied: the loads that fill what the template created or rebuilt, in dependency order (spec 4.4).' },
      answer: { schema: 'apply-template-answer' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/templates/reload',
    handler: 'reload',
    auth: ['tenant'],
    body: 'reload',
    table: 'readWrite',
    sends: ['reload'],
    idempotent: true,
    summary: 'Queue the loads of flows, per agent and in dependency order (spec 4.5)',
    docs: {
      success: { 200: 'One result per item, in request order (spec 4.5).' },
      answer: { schema: 'reload-answer' },
    },
  },
  {
    method: 'GET',
    path: '/tenant/agents',
    handler: 'list-agents',
    auth: ['tenant'],
    table: 'read',
    summary: "The tenant's agents, online or not",
    docs: { answer: { data: 'agent', list: true } },
  },
  {
    method: 'POST',
    path: '/tenant/agents',
    handler: 'create-agent',
    auth: ['tenant'],
    body: 'create-agent',
    table: 'readWrite',
    idempotent: true,
    summary: 'Add an agent (its token is shown once)',
    docs: { answer: { data: 'agent-created' }, success: { 201: 'The agent, with its token (shown only here).' } },
  },
  {
    method: 'POST',
    path: '/tenant/agents/{id}/token',
    handler: 'rotate-agent-token',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'Give an agent a new token (the old one stops working)',
    docs: { answer: { data: 'token-rotated' } },
  },
  {
    method: 'GET',
    path: '/tenant/runs',
    handler: 'list-runs',
    auth: ['tenant'],
    table: 'read',
    paginated: true,
    summary: "The tenant's runs, newest first",
    docs: { answer: { data: 'run', list: true } },
  },
  {
    method: 'POST',
    path: '/tenant/users',
    handler: 'create-user',
    auth: ['tenant'],
    body: 'create-user',
    table: 'readWrite',
    idempotent: true,
    summary: 'Add a user (login unique in the tenant)',
    docs: { answer: { data: 'user' }, success: { 201: 'The user.' } },
  },
  {
    method: 'GET',
    path: '/tenant/users',
    handler: 'list-users',
    auth: ['tenant'],
    table: 'read',
    query: wholeListQuery,
    summary: 'Every user with their groups and effective permissions (spec 4.10)',
    docs: { answer: { data: 'user-with-access', list: true } },
  },
  {
    method: 'GET',
    path: '/tenant/users/{id}',
    handler: 'get-user',
    auth: ['tenant'],
    table: 'read',
    summary: 'A user with their groups',
    docs: { answer: { data: 'user-with-access' } },
  },
  {
    method: 'PATCH',
    path: '/tenant/users/{id}',
    handler: 'update-user',
    auth: ['tenant'],
    body: 'update-user',
    table: 'readWrite',
    summary: "Change a user's login, name or e-mail",
    docs: { answer: { data: 'user' } },
  },
  {
    method: 'DELETE',
    path: '/tenant/users/{id}',
    handler: 'delete-user',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'Unlink a user: their login tokens and sessions stop working',
    docs: { answer: { data: 'done' } },
  },
  {
    method: 'POST',
    path: '/tenant/groups',
    handler: 'create-group',
    auth: ['tenant'],
    body: 'create-group',
    table: 'readWrite',
    idempotent: true,
    summary: 'Add a group',
    docs: { answer: { data: 'group' }, success: { 201: 'The group.' } },
  },
  {
    method: 'GET',
    path: '/tenant/groups',
    handler: 'list-groups',
    auth: ['tenant'],
    table: 'read',
    summary: 'The groups and their members',
    docs: { answer: { data: 'group', list: true } },
  },
  {
    method: 'GET',
    path: '/tenant/groups/{id}',
    handler: 'get-group',
    auth: ['tenant'],
    table: 'read',
    summary: 'One group and its members',
    docs: { answer: { data: 'group' } },
  },
  {
    method: 'DELETE',
    path: '/tenant/groups/{id}',
    handler: 'delete-group',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'Remove a group and its memberships',
    docs: { answer: { data: 'done' } },
  },
  {
    method: 'PUT',
    path: '/tenant/groups/{id}/members/{userId}',
    handler: 'add-group-member',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'Put a user in a group',
    docs: { answer: { data: 'membership' } },
  },
  {
    method: 'DELETE',
    path: '/tenant/groups/{id}/members/{userId}',
    handler: 'remove-group-member',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'Take a user out of a group',
    docs: { answer: { data: 'membership' } },
  },
  {
    method: 'POST',
    path: '/tenant/datamart',
    handler: 'create-datamart',
    auth: ['tenant'],
    body: 'create-datamart',
    table: 'readWrite',
    idempotent: true,
    summary: 'Create a datamart over tables of the tenant, with owners',
    docs: { success: { 201: 'The datamart (spec 2.3).' }, answer: { data: 'datamart' } },
  },
  {
    method: 'GET',
    path: '/tenant/datamart',
    handler: 'list-datamarts',
    auth: ['tenant'],
    table: 'read',
    query: wholeListQuery,
    summary: 'The datamarts with their tables, columns and owners (spec 4.7)',
    docs: { success: { 200: 'The datamarts (spec 4.7).' }, answer: { data: 'datamart', list: true } },
  },
  {
    method: 'GET',
    path: '/tenant/datamart/{id}',
    handler: 'get-datamart',
    auth: ['tenant'],
    table: 'read',
    summary: 'One datamart with its tables, columns and owners',
    docs: { success: { 200: 'The datamart (spec 2.3).' }, answer: { data: 'datamart' } },
  },
  {
    method: 'PATCH',
    path: '/tenant/datamart/{id}',
    handler: 'update-datamart',
    auth: ['tenant'],
    body: 'update-datamart',
    table: 'readWrite',
    summary: 'Rename a datamart or replace its tables or owners',
    docs: { success: { 200: 'The datamart (spec 2.3).' }, answer: { data: 'datamart' } },
  },
  {
    method: 'DELETE',
    path: '/tenant/datamart/{id}',
    handler: 'delete-datamart',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'Delete a datamart and its permission records',
    docs: { answer: { data: 'done' } },
  },
  {
    method: 'GET',
    path: '/tenant/datamart/{id}/user',
    handler: 'list-user-permissions',
    auth: ['tenant'],
    table: 'read',
    query: wholeListQuery,
    summary: 'User permissions of a datamart (spec 4.8)',
    docs: { success: { 200: 'The records (spec 4.8).' }, answer: { data: 'user-permission', list: true } },
  },
  {
    method: 'GET',
    path: '/tenant/datamart/{id}/group',
    handler: 'list-group-permissions',
    auth: ['tenant'],
    table: 'read',
    query: wholeListQuery,
    summary: 'Group permissions of a datamart (spec 4.9)',
    docs: { success: { 200: 'The records (spec 4.9).' }, answer: { data: 'group-permission', list: true } },
  },
  {
    method: 'PUT',
    path: '/tenant/datamart/{id}/user/{userId}',
    handler: 'replace-user-permissions',
    auth: ['tenant'],
    body: 'set-permissions',
    table: 'readWrite',
    summary: "Replace a user's permissions on a datamart",
    docs: { success: { 200: "The user's records now." }, answer: { data: 'user-permission', list: true } },
  },
  {
    method: 'DELETE',
    path: '/tenant/datamart/{id}/user/{userId}',
    handler: 'remove-user-permissions',
    auth: ['tenant'],
    table: 'readWrite',
    summary: "Remove a user's permissions on a datamart",
    docs: { success: { 200: "The user's records now (none)." }, answer: { data: 'user-permission', list: true } },
  },
  {
    method: 'PUT',
    path: '/tenant/datamart/{id}/group/{groupId}',
    handler: 'replace-group-permissions',
    auth: ['tenant'],
    body: 'set-permissions',
    table: 'readWrite',
    summary: "Replace a group's permissions on a datamart",
    docs: { success: { 200: "The group's records now." }, answer: { data: 'group-permission', list: true } },
  },
  {
    method: 'DELETE',
    path: '/tenant/datamart/{id}/group/{groupId}',
    handler: 'remove-group-permissions',
    auth: ['tenant'],
    table: 'readWrite',
    summary: "Remove a group's permissions on a datamart",
    docs: { success: { 200: "The group's records now (none)." }, answer: { data: 'group-permission', list: true } },
  },
  {
    method: 'GET',
    path: '/tenant/datamart/{id}/user/{userId}/effective',
    handler: 'effective-permissions',
    auth: ['tenant'],
    table: 'read',
    summary: "A user's effective permissions on each table of a datamart",
    docs: { answer: { data: 'effective-permission', list: true } },
  },
  {
    method: 'PUT',
    path: '/tenant/schedules/{id}',
    handler: 'put-schedule',
    auth: ['tenant'],
    body: 'schedule.v2',
    yaml: true,
    table: 'readWrite',
    ifMatch: true,
    summary: 'Create or replace a schedule file (spec 2.7), YAML or JSON; If-Match guards against lost updates',
    docs: {
      success: { 200: 'Replaced (or unchanged): the stored file.', 201: 'Created: the stored file.' },
      answer: scheduleFile,
      headers: scheduleVersion,
    },
  },
  {
    method: 'GET',
    path: '/tenant/schedules',
    handler: 'list-schedules',
    auth: ['tenant'],
    table: 'read',
    paginated: true,
    summary: 'The schedules, each with its next fire',
    docs: { answer: { data: 'schedule-summary', list: true } },
  },
  {
    method: 'GET',
    path: '/tenant/schedules/{id}',
    handler: 'get-schedule',
    auth: ['tenant'],
    table: 'read',
    summary: 'A schedule file, as YAML or JSON by Accept, with its version as ETag',
    docs: {
      success: { 200: 'The schedule file, as YAML when Accept prefers it, else JSON.' },
      answer: scheduleFile,
      headers: scheduleVersion,
    },
  },
  {
    method: 'DELETE',
    path: '/tenant/schedules/{id}',
    handler: 'delete-schedule',
    auth: ['tenant'],
    table: 'readWrite',
    ifMatch: true,
    summary: 'Delete a schedule (If-Match optional)',
    docs: { answer: { data: 'done' } },
  },
  {
    method: 'GET',
    path: '/tenant/schedules/{id}/next',
    handler: 'preview-schedule',
    auth: ['tenant'],
    table: 'read',
    query: [
      {
        name: 'count',
        description: 'How many fires to list.',
        schema: { type: 'integer', minimum: 1, maximum: 100, default: 10 },
      },
    ],
    summary: 'The next fire instants of a schedule, in UTC and local time',
    docs: { answer: { data: 'schedule-preview' } },
  },
  {
    method: 'GET',
    path: '/tenant/schedules/{id}/runs',
    handler: 'list-schedule-runs',
    auth: ['tenant'],
    table: 'read',
    paginated: true,
    summary: "A schedule's fires, newest first, with each flow's status",
    docs: { answer: { data: 'schedule-run', list: true } },
  },
  {
    method: 'GET',
    path: '/tenant/settings',
    handler: 'get-settings',
    auth: ['tenant'],
    table: 'read',
    summary: "The tenant's allowed alert channels (the webhook URL and its state, never the secret)",
    docs: { answer: { data: 'settings' } },
  },
  {
    method: 'PATCH',
    path: '/tenant/settings',
    handler: 'update-settings',
    auth: ['tenant'],
    body: 'update-settings',
    table: 'readWrite',
    summary: 'Set, change, pause, re-enable or remove the webhook channel (its signing secret is shown once)',
    docs: { answer: { data: 'settings' } },
  },
  {
    method: 'POST',
    path: '/tenant/settings/webhook/secret',
    handler: 'rotate-webhook-secret',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'A new webhook signing secret (shown once); the previous one also signs for 24 hours',
    docs: { answer: { data: 'settings' } },
  },
  {
    method: 'POST',
    path: '/tenant/alerts',
    handler: 'create-alert',
    auth: ['tenant'],
    body: 'create-alert',
    table: 'readWrite',
    idempotent: true,
    summary: 'Create an alert: its channels and content blocks',
    docs: { answer: { data: 'alert' }, success: { 201: 'The alert.' } },
  },
  {
    method: 'GET',
    path: '/tenant/alerts',
    handler: 'list-alerts',
    auth: ['tenant'],
    table: 'read',
    paginated: true,
    summary: "The tenant's alerts",
    docs: { answer: { data: 'alert', list: true } },
  },
  {
    method: 'GET',
    path: '/tenant/alerts/{id}',
    handler: 'get-alert',
    auth: ['tenant'],
    table: 'read',
    summary: 'An alert',
    docs: { answer: { data: 'alert' } },
  },
  {
    method: 'PATCH',
    path: '/tenant/alerts/{id}',
    handler: 'update-alert',
    auth: ['tenant'],
    body: 'update-alert',
    table: 'readWrite',
    summary: "Change an alert's name, channels or content",
    docs: { answer: { data: 'alert' } },
  },
  {
    method: 'DELETE',
    path: '/tenant/alerts/{id}',
    handler: 'delete-alert',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'Delete an alert (its deliveries stay readable until they expire)',
    docs: { answer: { data: 'done' } },
  },
  {
    method: 'POST',
    path: '/tenant/alerts/{id}/preview',
    handler: 'preview-alert',
    auth: ['tenant'],
    body: 'alert-delivery',
    table: 'read',
    summary: 'The payload a delivery would send; sends nothing',
    docs: { answer: { data: 'alert-preview' } },
  },
  {
    method: 'POST',
    path: '/tenant/alerts/{id}/send',
    handler: 'send-alert',
    ...queuesDelivery,
    summary: 'Force-send an alert: queue a webhook delivery and return its id',
  },
  {
    method: 'POST',
    path: '/tenant/alerts/{id}/fire',
    handler: 'fire-alert',
    ...queuesDelivery,
    summary: 'The platform fired an alert for a user, with its generated content: queue a webhook delivery',
  },
  {
    method: 'GET',
    path: '/tenant/alerts/{id}/deliveries',
    handler: 'list-deliveries',
    auth: ['tenant'],
    table: 'read',
    paginated: true,
    summary: "An alert's deliveries, newest first (kept 30 days)",
    docs: { answer: { data: 'delivery', list: true } },
  },
  {
    method: 'GET',
    path: '/tenant/deliveries/{id}',
    handler: 'get-delivery',
    auth: ['tenant'],
    table: 'read',
    summary: 'A delivery: status, attempts (time, status code or error), next attempt',
    docs: { answer: { data: 'delivery' } },
  },
  {
    method: 'POST',
    path: '/tenant/deliveries/{id}/redeliver',
    handler: 'redeliver',
    auth: ['tenant'],
    table: 'readWrite',
    sends: ['webhook'],
    payloads: 'read',
    summary: 'Queue a failed delivery again, with the same webhook-id',
    docs: { answer: { data: 'delivery' }, success: { 202: 'The delivery, queued again.' } },
  },
  {
    method: 'POST',
    path: '/tenant/login',
    handler: 'login',
    auth: ['tenant'],
    body: 'login',
    table: 'read',
    signingKeys: true,
    summary: 'A login token and the URL that opens the BI authenticated (spec 4.6)',
    docs: {
      success: { 200: 'The login token and the URL that opens the BI signed in (spec 4.6).' },
      answer: { schema: 'login-answer' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/login/revoke',
    handler: 'revoke-login',
    auth: ['tenant'],
    body: 'revoke-login',
    table: 'readWrite',
    summary: "End a user's sessions and void the login tokens issued to them",
    docs: { success: { 200: 'Revoked.' }, answer: { schema: 'revoke-login-answer' } },
  },
  {
    method: 'GET',
    path: '/.well-known/jwks.json',
    handler: 'jwks',
    auth: [],
    table: 'none',
    signingKeys: true,
    summary: 'The public keys that verify login tokens',
    docs: {
      success: { 200: 'A JWK set (RFC 7517), cacheable for five minutes.' },
      answer: { schema: 'jwk-set', mediaType: 'application/jwk-set+json' },
    },
  },
  {
    method: 'GET',
    path: '/auth/api/{token}',
    handler: 'landing',
    auth: [],
    table: 'readWrite',
    signingKeys: true,
    query: [
      {
        name: 'ref',
        description: 'The BI route to open, Base64-encoded (as `POST /tenant/login` builds it).',
        schema: { type: 'string' },
      },
      { name: 'showMenu', description: "0 hides the BI's main menu.", schema: { enum: ['0', '1'] } },
      { name: 'showDesksIcon', description: '0 hides the desks icon.', schema: { enum: ['0', '1'] } },
    ],
    summary: 'SSO landing: verifies a login token, opens a session, redirects into the BI',
    docs: {
      success: { 302: 'Signed in: a session cookie, and a redirect to the route (`ref`) on the BI.' },
      answer: { none: true },
      headers: {
        Location: 'The BI route to open.',
        'Set-Cookie': 'The `__Host-bi_session` cookie (HttpOnly, Secure, SameSite=None, Partitioned).',
      },
      credential: {
        in: 'path',
        note:
          'Authenticated by the login token in the path (from `POST /tenant/login`): an ES256 JWT for this tenant ' +
          'domain, valid one hour. Meant for a browser, on the tenant domain: answers a redirect or an HTML page.',
      },
      htmlErrors: {
        400: 'The `ref` parameter is not valid Base64.',
        401: 'The token is expired, revoked, not for this domain, or not a token.',
      },
    },
  },
  {
    method: 'GET',
    path: '/auth/session',
    handler: 'session',
    auth: [],
    table: 'read',
    summary: "The BI session's user, tenant and UI flags",
    docs: {
      answer: { data: 'session' },
      credential: {
        in: 'cookie',
        note: 'Authenticated by the `__Host-bi_session` cookie the SSO landing set on the tenant domain (not a bearer token).',
      },
    },
  },
  {
    method: 'POST',
    path: '/agent/heartbeat',
    handler: 'agent-heartbeat',
    auth: ['agent'],
    table: 'readWrite',
    summary: 'Agent heartbeat: marks it online, returns the loads dispatched to it',
    docs: { answer: { data: 'heartbeat' } },
  },
  {
    method: 'POST',
    path: '/agent/runs/{id}',
    handler: 'report-run',
    auth: ['agent'],
    body: 'report-run',
    table: 'readWrite',
    summary: 'Agent reports a run running, succeeded or failed',
    docs: { answer: { data: 'run' } },
  },
];

/**
 * What runs for a request no row of the route table matches: API Gateway's `$default` route on AWS,
 * the gateway's fallback in the twin. It answers 404 for a path no route has, and 405 (with
 * `Allow`) for a path that other methods take, both in the error envelope.
 */
export const unmatchedRoute = {
  routeKey: unmatchedRouteKey,
  handler: 'unmatched-route',
  auth: [],
  table: 'none',
  summary: 'A request no route matches: 404, or 405 with Allow for a path other methods take',
} as const satisfies Pick<Route, 'handler' | 'auth' | 'table' | 'summary'> & { routeKey: string };

/** A function fed by a queue (a Lambda event source mapping on AWS, a poller in the twin). */
export interface QueueConsumer {
  queue: QueueName;
  /** File under functions/workers/ (without .ts) exporting `handler`. */
  handler: string;
  batchSize: number;
  table: TableAccess;
  payloads?: 'read' | 'readWrite';
  /** Moves messages to its queue's DLQ itself (after its own last retry). */
  sendsToDeadLetter?: boolean;
  /** Queues it sends to; the stack grants exactly these. */
  sends?: readonly QueueName[];
  /** Function time-out; the queue's visibility timeout must be at least this. */
  timeoutSeconds: number;
  /**
   * The stack setting that caps its concurrency: its event source's maximum concurrency, the most
   * batches Lambda runs at once, which keeps a backlog from taking the account's concurrency from the
   * API and the other consumers. On AWS every consumer also reserves that many (unless the stage turns
   * reservations off: lib/throttling.ts), so a flood on the API cannot take them either.
   */
  concurrencySetting: ConsumerConcurrencySetting;
  /**
   * Its work is due at a given minute, and lost when an hour late, so it needs its whole cap at once
   * when it peaks with other workloads (the twin starts it at its cap: local/queue-poller.ts).
   */
  reservesConcurrency?: boolean;
  summary: string;
}

export type ConsumerConcurrencySetting = 'reloadConcurrency' | 'webhookConcurrency' | 'fireConcurrency';

export const queueConsumers: readonly QueueConsumer[] = [
  {
    queue: 'reload',
    handler: 'reload-worker',
    batchSize: 10,
    table: 'readWrite',
    timeoutSeconds: 30,
    concurrencySetting: 'reloadConcurrency',
    summary: 'Records queued loads as runs for their agents',
  },
  {
    queue: 'webhook',
    handler: 'webhook-deliverer',
    batchSize: 10,
    table: 'readWrite',
    payloads: 'readWrite',
    sendsToDeadLetter: true,
    // The batch's deliveries go out in parallel, each with the 10-second receiver time-out.
    timeoutSeconds: 30,
    concurrencySetting: 'webhookConcurrency',
    summary: 'POSTs alert webhooks (signed), retries on the schedule, dead-letters after the last attempt',
  },
  {
    queue: 'fire',
    handler: 'schedule-fire-worker',
    batchSize: 10,
    table: 'readWrite',
    sends: ['reload'],
    // A batch is up to 100 schedules fired in parallel: about a second on AWS.
    timeoutSeconds: 20,
    concurrencySetting: 'fireConcurrency',
    reservesConcurrency: true,
    summary: 'Fires the schedules a tick found due: queues their flows, claims each slot once, moves each to its next fire',
  },
];

/** A function run on a timer (an EventBridge rule on AWS, the twin's clock locally). */
export interface TimedFunction {
  /** File under functions/workers/ (without .ts) exporting `handler`. */
  handler: string;
  /** Runs at every whole multiple of this many minutes. */
  everyMinutes: number;
  /** Lambda's timeout for one run (the twin's clock gives it the same). */
  timeoutSeconds: number;
  table: TableAccess;
  sends?: readonly QueueName[];
  summary: string;
}

export const timedFunctions: readonly TimedFunction[] = [
  {
    handler: 'schedule-dispatcher',
    everyMinutes: 1,
    timeoutSeconds: 60,
    table: 'readWrite',
    sends: ['fire'],
    summary: 'Finds the schedules that are due and sends them to the fire queue, oldest first',
  },
  {
    handler: 'follow-up-sweeper',
    everyMinutes: 1,
    timeoutSeconds: 60,
    table: 'readWrite',
    sends: ['webhook'],
    summary:
      "Finishes what requests left behind after their main write: a tenant's pending template, a delivery to queue, a deletion's sweep",
  },
];

export const routeKey = (route: Pick<Route, 'method' | 'path'>) => `${route.method} ${route.path}`;

/** Every query parameter a route reads: pagination's, then its own. */
export const queryParametersOf = (route: Pick<Route, 'paginated' | 'query'>): readonly QueryParameter[] => [
  ...(route.paginated ? pageQuery : []),
  ...(route.query ?? []),
];
