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
   * optional: absent means something of its own); a string's length what textQueryParameter enforces,
   * a boolean's `true` or `false` what booleanQueryParameter does; other values reach the handler as sent.
   */
  schema:
    | { type: 'integer'; minimum: number; maximum: number; default?: number }
    | { type: 'string'; minLength?: number; maxLength?: number }
    | { type: 'boolean' }
    | { enum: readonly string[] };
}

/** The page size of every list: what a paged list answers without `limit`, and the most `limit` may ask for. */
export const pageSize = { default: 50, maximum: 100 } as const;

/** The query parameters of every paginated route (pageParameters reads them). */
export const pageQuery: readonly QueryParameter[] = [
  {
    name: 'limit',
    description: 'Page size. The answer carries `nextCursor` beside `data`: null exactly on the last page.',
    schema: { type: 'integer', minimum: 1, maximum: pageSize.maximum, default: pageSize.default },
  },
  { name: 'cursor', description: 'The `nextCursor` of the previous page.', schema: { type: 'string' } },
];

/**
 * The query parameters of the lists answered whole unless `limit` is sent (wholeListParameters reads
 * them): the spec's lists that show no paging (datamarts, users, a datamart's permission records,
 * templates), and the groups and agents, which the tenant's quotas bound. Paged, they are paged as
 * pageQuery's lists are, with the same bounds.
 */
export const wholeListQuery: readonly QueryParameter[] = [
  {
    name: 'limit',
    description:
      'Page size. Without it the answer is the whole list, as the spec shows its lists (never silently fewer: a list ' +
      'too large for one answer, over 6 MB, is a 400 `answer_too_large` that says to send `limit`). With it, a page, ' +
      'and `nextCursor` beside `data` (null exactly on the last page).',
    schema: { type: 'integer', minimum: 1, maximum: pageSize.maximum },
  },
  { name: 'cursor', description: 'The `nextCursor` of the previous page.', schema: { type: 'string' } },
];

/** What a success answers, when not the generic envelope `{status: 'success', data}`. */
export type RouteAnswer =
  /**
   * The envelope, its `data` one record of the schema (`list`: an array of them); `yaml`: also the bare
   * record as YAML; `ndjson`: also the list's records as NDJSON, one per line (by Accept).
   */
  | { data: RequestSchemaName | ResponseSchemaName; list?: boolean; yaml?: boolean; ndjson?: boolean }
  /** Exactly the schema (the spec's own `{success: true, …}` answers), as JSON unless `mediaType` says otherwise. */
  | { schema: ResponseSchemaName; mediaType?: string }
  /** Text, in one of these media types. */
  | { text: readonly string[] }
  /** No body (a redirect). */
  | { none: true };

/** What only the API description says about a route: tools/openapi/ reads it, no function does. */
export interface RouteDocs {
  /**
   * What the operation does, when an integrator calls it, and what it changes (or that it changes
   * nothing): the teaching the summary has no room for, in a few plain sentences.
   */
  description: string;
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

/** The kinds of resource audit records name (functions/core/audit/): the `resource` filter of the audit routes. */
export const auditResources = [
  'tenant',
  'template',
  'rollout',
  'reload',
  'agent',
  'run',
  'user',
  'group',
  'datamart',
  'schedule',
  'settings',
  'alert',
  'delivery',
  'login',
  'client',
] as const;
export type AuditResource = (typeof auditResources)[number];

/**
 * What a route that writes records of its changes (functions/core/audit/): every `readWrite` route
 * states it. `resource` is what it changes; the record's resource id is the path parameter
 * `idParameter` (by default `id`, when the path has one; `false`: none of them) or the body's
 * `bodyId`, else the id the request takes from the counter named like the resource (a creation's new
 * id). A client's change to a tenant joins that tenant's chain. `unaudited` says why a route's
 * writes are no change anyone audits (a liveness stamp, a sign-in).
 */
export type AuditFact =
  | {
      resource: AuditResource;
      idParameter?: string | false;
      /** The body's field that holds the resource's id, when the path has none (a tenant's deletion). */
      bodyId?: string;
      /**
       * The change is a queued message, not a write (a reload, a retry of a run): the record is written
       * in a transaction of its own once the message is sent (functions/core/audit/).
       */
      queuedChange?: true;
    }
  | { unaudited: string };

export interface Route {
  method: HttpMethod;
  /** API Gateway path syntax: `{name}` matches one segment. */
  path: string;
  /** File under functions/http/ (without .ts) exporting `handler`. */
  handler: string;
  auth: readonly AuthScheme[];
  /** Request body schema under schemas/; a route without one takes no body. */
  body?: RequestSchemaName;
  /**
   * The body may be left out: a request without one means the schema's defaults, as it did before the
   * route took a body (the handler reads it with `optionalBody`; the API description says it is not required).
   */
  bodyOptional?: boolean;
  /** Also accept the body as YAML (`application/yaml`). */
  yaml?: boolean;
  /** Queues the route's function sends to; the stack grants exactly these. */
  sends?: readonly QueueName[];
  table: TableAccess;
  /** Honours the Idempotency-Key header (POSTs that create things). */
  idempotent?: boolean;
  /** What its audit records name; every `readWrite` route has it. */
  audit?: AuditFact;
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
   * Files of installed packages (or of the project: `#docs/...`) shipped beside the function's code and read
   * at run time, not bundled: large static files would otherwise sit in the code every cold start loads.
   */
  packageFiles?: readonly string[];
  summary: string;
  docs: RouteDocs;
}

/**
 * What a function reads of its own row at run time (httpHandler). tools/route-facts.ts writes them
 * for every row to functions/core/api/route-facts.generated.ts, which the functions read instead
 * of this file: their bundles then carry neither the table's summaries nor its documentation.
 */
export interface RouteFacts extends Pick<Route, 'auth' | 'body' | 'yaml' | 'idempotent' | 'ifMatch' | 'audit'> {
  /** Every query parameter it reads (queryParametersOf), without the descriptions. */
  query?: ReadonlyArray<Pick<QueryParameter, 'name' | 'schema'>>;
  /**
   * A GET that only reads the table (no queue, no payload written) and takes a token: its reads start
   * beside the token's lookup (principals.ts `authenticateInParallel`), its answer waits for it.
   */
  readsOnly?: true;
}

/** Whether a route's reads may start beside its token's lookup (RouteFacts `readsOnly`): a GET that writes nothing. */
export const readsOnly = (route: Route): boolean =>
  route.method === 'GET' &&
  route.table !== 'readWrite' &&
  !route.sends &&
  route.payloads !== 'readWrite' &&
  route.auth.length > 0;

/** A route anyone may call: it takes no bearer token (the edge lets it through without one, and limits it per address). */
export const takesNoToken = (route: Pick<Route, 'auth'>): boolean => route.auth.length === 0;

/**
 * Every route's function times out after this long (under API Gateway's 30-second integration
 * limit); the twin gives its invocations the same. Locks and idempotency claims a request takes
 * last until its function's deadline, so one whose holder died frees itself within this time.
 */
export const routeTimeoutSeconds = 15;

/** Force-send and fire both queue a webhook delivery of the alert (each row adds its own description to `docs`). */
const queuesDelivery = {
  auth: ['tenant'],
  body: 'alert-delivery',
  table: 'readWrite',
  sends: ['webhook'],
  payloads: 'readWrite',
  idempotent: true,
  docs: { success: { 202: 'The delivery, queued.' }, answer: { data: 'delivery-queued' } },
} as const satisfies Partial<Omit<Route, 'docs'>> & { docs: Omit<RouteDocs, 'description'> };

/** A template's latest version, for If-Match on its deletion. */
const templateVersion = { ETag: "The template's latest version; send it back as If-Match." };

/** A tenant's version, for If-Match on its changes. */
const tenantVersion = { ETag: "The tenant's version; send it back as If-Match." };

/** A schedule file: JSON in the envelope, or the bare file as YAML (by Accept), with its version as ETag. */
const scheduleFile = { data: 'schedule.v2', yaml: true } as const satisfies RouteAnswer;
const scheduleVersion = { ETag: "The schedule's version; send it back as If-Match." };

/** The filter of the lists of deliveries: a delivery's status. */
const deliveryStatusQuery: QueryParameter = {
  name: 'status',
  description:
    'Only the deliveries with this status (`failed` lists what to look at, or to redeliver). A filtered page reads ' +
    'at most 1,000 deliveries: it may then hold fewer than `limit`, even none, with a `nextCursor` to go on from.',
  schema: { enum: ['queued', 'retrying', 'delivered', 'failed'] },
};

/** The filters of the audit trail's two lists. */
const auditQuery: readonly QueryParameter[] = [
  { name: 'resource', description: 'Only the records of changes to this kind of resource.', schema: { enum: auditResources } },
  {
    name: 'resourceId',
    description: "Only the records naming this resource id (with `resource`, one resource's history).",
    schema: { type: 'string', minLength: 1, maxLength: 64 },
  },
  {
    name: 'actor',
    description: 'Only the changes made with this kind of credential (`operator`: the admin CLI).',
    schema: { enum: ['client', 'tenant', 'agent', 'operator'] },
  },
  {
    name: 'from',
    description: 'Only the records at or after this instant (ISO 8601: `2026-11-26T10:00:00Z`, or a date for its start).',
    schema: { type: 'string', minLength: 10, maxLength: 35 },
  },
  {
    name: 'to',
    description: 'Only the records at or before this instant (ISO 8601; a date takes its whole day).',
    schema: { type: 'string', minLength: 10, maxLength: 35 },
  },
];

/** What both audit lists say of their answer: the records, newest first, as JSON or NDJSON. */
const auditDocs = {
  answer: { data: 'audit-record', list: true, ndjson: true },
  headers: {
    'X-Next-Cursor': 'With `Accept: application/x-ndjson`: the `nextCursor` of the page (absent on the last one).',
  },
} as const satisfies Omit<RouteDocs, 'description'>;

const auditFilters =
  'Filtered by `resource`, `resourceId`, `actor` and a time range (`from`, `to`); a filtered page reads at most 1,000 ' +
  'records, so it may hold fewer than `limit`, even none, with a `nextCursor` to go on from. ';
const auditRecordText =
  'Each record says when, who (the kind of credential, its owner and a token id: the first 16 hex digits of the ' +
  "token's SHA-256, never the token), what (the route, the resource and its id, the names of the body's fields, never " +
  "their values), the request id and the caller's address. Records form a hash chain (`seq`, `prevHash`, `hash`) " +
  'that `npm run admin -- audit verify` checks. `Accept: application/x-ndjson` exports a page as one record per line. ' +
  'Records are kept `auditRetentionDays` (400 days by default). It changes nothing.';

/** `agent`: the chain of one agent's run reports, kept apart from the tenant's (docs/operations.md, Audit trail). */
const agentChainQuery: QueryParameter = {
  name: 'agent',
  description:
    "Read this agent's chain instead: the records of its run reports (`POST /agent/runs/{id}`), kept " +
    '`runRetentionDays` (90 days by default), as the runs are.',
  schema: { type: 'integer', minimum: 1, maximum: 999_999 },
};

export const routes: readonly Route[] = [
  {
    method: 'GET',
    path: '/health',
    handler: 'health',
    auth: [],
    table: 'none',
    summary: 'Liveness check',
    docs: {
      description:
        "Answers `{status: 'ok'}` as soon as the API's function runs. It reaches no dependency (not the table, not " +
        'the queues), so it says that the API is up, not that every part of the service is. Point an uptime ' +
        'monitor or a deployment check at it; it changes nothing.',
      answer: { data: 'health' },
    },
  },
  {
    method: 'GET',
    path: '/openapi.json',
    handler: 'openapi',
    auth: [],
    table: 'none',
    packageFiles: ['#docs/openapi.json'],
    summary: 'This API as an OpenAPI 3.1 document (generated from the route table and the schemas)',
    docs: {
      description:
        'This document: every route with its bodies, answers and error codes, and the alert webhook, generated ' +
        'from the route table and the schemas. Fetch it to generate a client or to load the API into a tool; its ' +
        'content changes only with a deployment, so it may be cached for five minutes. Reading it changes nothing.',
      success: { 200: 'This document.' },
      answer: { schema: 'openapi-document' },
    },
  },
  {
    method: 'GET',
    path: '/docs',
    handler: 'docs',
    auth: [],
    table: 'none',
    summary: 'The API documentation page (Swagger UI, served by the service itself)',
    docs: {
      description:
        'A page that renders this document with Swagger UI, served by the service itself: its script and styles ' +
        'come from GET /docs/{asset} and nothing from another origin. Open it in a browser to read the API, or to ' +
        'try a call with a token. It changes nothing.',
      success: { 200: 'An HTML page that renders this document with Swagger UI.' },
      answer: { text: ['text/html'] },
    },
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
      description:
        "One of the three files the documentation page loads (Swagger UI's script and style sheet, and the script " +
        'that starts it); any other name is 404. The page fetches them itself, so an integrator has no reason to ' +
        'call this. Gzipped when the browser accepts it, with an ETag for conditional requests; it changes ' +
        'nothing.',
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
    docs: {
      description:
        "Says whose a client or tenant token is: its kind and the client's or the tenant's id, from the token " +
        'lookup alone. Call it to check that a token works and is the one you meant before using it: an unknown or ' +
        "revoked token is 401, a deleted tenant's is 404. It changes nothing.",
      answer: { data: 'whoami' },
    },
  },
  {
    method: 'POST',
    path: '/tenants',
    audit: { resource: 'tenant' },
    handler: 'create-tenant',
    auth: ['client'],
    body: 'create-tenant',
    table: 'readWrite',
    idempotent: true,
    summary: 'Create a tenant (spec 4.1)',
    docs: {
      description:
        'Creates a tenant of the client: its record, its domain (`<slug-of-nome>-<id>.<base domain>`, never ' +
        'changed), a default agent and the tenant token, which only this answer shows: store it, the tenant ' +
        "backend sends it on every `/tenant` route. The template named by `templateId` (else the client's default, " +
        'when one is set) is applied at once to an active tenant, and kept pending until activation for an ' +
        'inactive one; should that apply fail, the tenant exists all the same and the template is applied within ' +
        "minutes. The answer has no reload plan: the tables the template created stay empty until the tenant's " +
        'next POST /tenant/templates/apply lists their flows.',
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
    query: [
      {
        name: 'nome',
        description:
          'Only the tenants with this name, the whole name compared as names are (case, compatibility forms and runs ' +
          'of spaces folded, invisible characters dropped).',
        schema: { type: 'string', minLength: 1, maxLength: 200 },
      },
      { name: 'ativo', description: 'Only the active (`true`) or inactive (`false`) tenants.', schema: { type: 'boolean' } },
    ],
    summary: "List the client's tenants",
    docs: {
      description:
        "The client's live tenants, a page at a time: id, nome, dominio, ativo and the template still pending, if " +
        "any (deleted tenants are not listed). Call it to match your customer records with the service's, or to " +
        "find a tenant's id. `nome` and `ativo` narrow it (both must match when both are given); a filtered page " +
        'reads at most 1,000 tenants, so it may hold fewer than `limit`, even none, with a `nextCursor` to go on ' +
        'from: follow `nextCursor` until it is null. It changes nothing.',
      answer: { data: 'tenant-summary', list: true },
    },
  },
  {
    method: 'POST',
    path: '/tenants/delete',
    audit: { resource: 'tenant', bodyId: 'id' },
    handler: 'delete-tenant',
    auth: ['client'],
    body: 'delete-tenant',
    table: 'readWrite',
    summary: 'Delete a tenant, compatibility form (spec 4.3)',
    docs: {
      description:
        "Deletes one of the client's tenants exactly as DELETE /tenants does (same body, same code path, same " +
        'answer), for HTTP clients that cannot send a DELETE with a body. In one transaction the tenant is marked ' +
        "deleted, its token and its agents' tokens stop working, and a billing record is kept. Deleting it again " +
        'is 404.',
      answer: { data: 'done' },
    },
  },
  {
    method: 'DELETE',
    path: '/tenants',
    audit: { resource: 'tenant', bodyId: 'id' },
    handler: 'delete-tenant',
    auth: ['client'],
    body: 'delete-tenant',
    table: 'readWrite',
    summary: 'Delete a tenant (spec 4.10)',
    docs: {
      description:
        "Deletes one of the client's tenants (a soft delete): in one transaction it leaves the client's list and " +
        "frees its place in the client's tenant quota, its token and its agents' tokens stop working (the tenant " +
        'token answers 404 `Tenant not found` from then on), and a billing record (tenant, client, dates) is kept. ' +
        'Loads queued for its agents are dropped, and its BI sessions end. Call it when a customer leaves: it ' +
        'cannot be undone, and deleting it again is 404.',
      answer: { data: 'done' },
    },
  },
  {
    method: 'POST',
    path: '/tenants/{id}/deactivate',
    audit: { resource: 'tenant' },
    handler: 'deactivate-tenant',
    auth: ['client'],
    table: 'readWrite',
    summary: 'Deactivate a tenant',
    docs: {
      description:
        "Deactivates one of the client's tenants, for example while an account is suspended. Its token still " +
        'reads, but applying templates, reloading, login tokens and alert deliveries are refused (409 ' +
        '`tenant_inactive`), its schedules skip their fires, and every login token and BI session issued until now ' +
        'is void, also after a reactivation. Nothing is deleted: POST /tenants/{id}/activate undoes it, and ' +
        'repeating it is harmless.',
      answer: { data: 'tenant-summary' },
    },
  },
  {
    method: 'POST',
    path: '/tenants/{id}/activate',
    audit: { resource: 'tenant' },
    handler: 'activate-tenant',
    auth: ['client'],
    table: 'readWrite',
    summary: 'Activate a tenant',
    docs: {
      description:
        "Activates one of the client's tenants: its token may again apply templates, reload, ask for login tokens " +
        'and send alerts, and its schedules fire again. A tenant created inactive with a template gets that ' +
        'template applied now (by the follow-up sweeper within minutes, should this request stop first). Login ' +
        'tokens and sessions voided by the deactivation stay void; repeating it is harmless.',
      answer: { data: 'tenant-summary' },
    },
  },
  {
    method: 'GET',
    path: '/tenants/{id}',
    handler: 'get-client-tenant',
    auth: ['client'],
    table: 'read',
    summary: 'One of the client’s tenants: its development_variables, template, state and dates',
    docs: {
      description:
        "One of the client's tenants as the client set it: nome, dominio, ativo, development_variables and " +
        'scheduling granularity, the template version it has (and one still pending), with its creation and change ' +
        'dates. Read it before a PATCH: its ETag is the version to send back as If-Match. It changes nothing.',
      answer: { data: 'tenant-detail' },
      headers: tenantVersion,
    },
  },
  {
    method: 'PATCH',
    path: '/tenants/{id}',
    audit: { resource: 'tenant' },
    handler: 'update-tenant',
    auth: ['client'],
    body: 'update-tenant',
    table: 'readWrite',
    ifMatch: true,
    summary: "Change a tenant's nome, development_variables or schedulingGranularity (If-Match guards against lost updates)",
    docs: {
      description:
        'Changes what the client sets of a tenant; fields left out keep their values. `nome` renames it (its ' +
        'domain stays), `development_variables` replaces them whole (either format, checked as on creation; agents ' +
        'get the new ones with the next loads they take), and `schedulingGranularity` `minutes` allows Minute ' +
        'triggers in its schedules (going back to `hours` is 409 while a schedule has one). Answers the tenant as ' +
        'GET /tenants/{id} shows it, with its new ETag.',
      answer: { data: 'tenant-detail' },
      headers: tenantVersion,
    },
  },
  {
    method: 'POST',
    path: '/tenants/{id}/token',
    audit: { resource: 'tenant' },
    handler: 'rotate-tenant-token',
    auth: ['client'],
    body: 'rotate-token',
    bodyOptional: true,
    table: 'readWrite',
    summary: "Rotate a tenant's token (the previous one keeps working for a grace period)",
    docs: {
      description:
        "Issues a new token for one of the client's tenants, shown only in this answer. The token it replaces keeps " +
        'working for `previousValidForSeconds` (24 hours without a body, at most 7 days; `previousExpiresAt` says ' +
        'until when), so a fleet of backends can switch one by one; GET /tenants/{id} shows when each was last used, ' +
        'and DELETE /tenants/{id}/token/previous ends the previous one once nothing uses it. Only one previous token ' +
        'lives at a time: rotating again within the grace period ends the one the last rotation kept. A token that ' +
        "may have leaked: send `previousValidForSeconds: 0`, which ends it at once. Its agents' tokens are not affected.",
      answer: { data: 'token-rotated' },
    },
  },
  {
    method: 'DELETE',
    path: '/tenants/{id}/token/previous',
    audit: { resource: 'tenant' },
    handler: 'end-previous-tenant-token',
    auth: ['client'],
    table: 'readWrite',
    summary: "End a tenant's previous token now",
    docs: {
      description:
        'Ends at once the tenant token the last rotation kept working (POST /tenants/{id}/token), before its grace ' +
        'period is over: call it once every backend uses the new token (GET /tenants/{id} shows when the previous one ' +
        'was last used). The current token is not affected. `ended` says whether a previous token was still working; ' +
        'when none was, the answer is the same success with `ended: false`, so calling it again is harmless.',
      answer: { data: 'previous-token-ended' },
    },
  },
  {
    method: 'GET',
    path: '/tenant',
    handler: 'get-tenant',
    auth: ['tenant'],
    table: 'read',
    summary: 'The tenant of the token, with its applications and desks',
    docs: {
      description:
        'The tenant of the token: its summary, the template version it has, and the applications, desks (with ' +
        'their tables) and flows its templates put in it. Call it to build your own BI menu (with `showMenu=0` ' +
        'login URLs, spec 4.6), or to find the flow ids that schedules and reload items name. It changes nothing.',
      answer: { data: 'own-tenant' },
    },
  },
  {
    method: 'POST',
    path: '/tenants/templates',
    audit: { resource: 'template' },
    handler: 'publish-template',
    auth: ['client'],
    body: 'template-bundle',
    yaml: true,
    table: 'readWrite',
    idempotent: true,
    summary: 'Publish a new template (version 1)',
    docs: {
      description:
        'Publishes a new template of the client as version 1: a bundle of desks, tables with their columns, ' +
        'connections, flows (with the tables they read and write), applications and dashboards, in JSON or YAML. ' +
        'It is checked whole before anything is stored (unique keys, references that resolve, no flow cycles: 400 ' +
        "`invalid_template`), and its name must be new among the client's templates (409 names the template that " +
        'has it). No tenant changes until the template is applied to it, at its creation or by POST ' +
        '/tenant/templates/apply.',
      answer: { data: 'template-published' },
      success: { 201: 'The template, version 1.' },
    },
  },
  {
    method: 'GET',
    path: '/tenants/templates',
    handler: 'list-templates',
    auth: ['client'],
    table: 'read',
    query: wholeListQuery,
    summary: "List the client's templates (spec 4.2)",
    docs: {
      description:
        "The client's templates, each as `{id, nome}` (spec 4.2). Call it to choose the `templateId` to create a " +
        'tenant with, to apply, or to make the default. The whole list (at most the 1,000 templates a client may ' +
        'have) unless `limit` is sent. It changes nothing.',
      answer: { data: 'template-summary', list: true },
    },
  },
  {
    method: 'GET',
    path: '/tenants/templates/{id}',
    handler: 'get-template',
    auth: ['client'],
    table: 'read',
    summary: 'A template: its latest bundle and version history',
    docs: {
      description:
        "One of the client's templates: the bundle of its latest version and the list of its versions. Read it to " +
        'see what an apply would write, or before deleting it (its ETag is the latest version, to send back as ' +
        'If-Match). It changes nothing.',
      answer: { data: 'template-detail' },
      headers: templateVersion,
    },
  },
  {
    method: 'DELETE',
    path: '/tenants/templates/{id}',
    audit: { resource: 'template' },
    handler: 'delete-template',
    auth: ['client'],
    table: 'readWrite',
    ifMatch: true,
    summary: "Delete a template and its versions (409 while it is the client's default; tenants keep what it applied)",
    docs: {
      description:
        "Deletes one of the client's templates with all its versions. Tenants keep everything it applied; a tenant " +
        'still waiting to get it (created inactive with it) drops it. Refused (409 `template_is_default`) while it ' +
        "is the client's default: set another default, or none, first.",
      answer: { data: 'done' },
    },
  },
  {
    method: 'PUT',
    path: '/tenants/templates/{id}',
    audit: { resource: 'template' },
    handler: 'publish-template-version',
    auth: ['client'],
    body: 'template-bundle',
    yaml: true,
    table: 'readWrite',
    summary: "Publish a template's next version",
    docs: {
      description:
        "Publishes the next version of one of the client's templates, checked as a new template is (its name must " +
        'stay its own). Tenants that have the template get the new version only when it is applied to them again; ' +
        "tenants created with it from now on get it at once. Sending the latest version's bundle again adds no " +
        'version and answers the latest one, so a retry is safe.',
      answer: { data: 'template-published' },
    },
  },
  {
    method: 'PUT',
    path: '/tenants/templates/default',
    audit: { resource: 'template' },
    handler: 'set-default-template',
    auth: ['client'],
    body: 'set-default-template',
    table: 'readWrite',
    summary: "Set or clear the client's default template",
    docs: {
      description:
        "Sets the client's default template (`templateId`), or clears it (`null`): a tenant created without " +
        '`templateId` gets the default applied. Tenants that exist already are not touched, and setting the same ' +
        'value again changes nothing.',
      answer: { data: 'default-template' },
    },
  },
  {
    method: 'GET',
    path: '/tenants/templates/{id}/tenants',
    handler: 'list-template-tenants',
    auth: ['client'],
    table: 'read',
    paginated: true,
    query: [
      {
        name: 'belowVersion',
        description: 'Only the tenants on an earlier version of the template (or on none of its versions yet).',
        schema: { type: 'integer', minimum: 1, maximum: 999_999 },
      },
    ],
    summary: "The template's tenants (its fleet), each with the version it runs",
    docs: {
      description:
        'The tenants that have the template (the one each last applied, or waits for), by version then id: each ' +
        'with its name, whether it is active, the version it runs (null while it has none yet) and whether an apply ' +
        'of the template waits for it (its activation, or its provisioning). `belowVersion` lists those still on an ' +
        'earlier version: the tenants a rollout of that version would change. It changes nothing.',
      answer: { data: 'template-tenant', list: true },
    },
  },
  {
    method: 'POST',
    path: '/tenants/templates/{id}/rollouts',
    audit: { resource: 'rollout', idParameter: false },
    handler: 'start-rollout',
    auth: ['client'],
    body: 'create-rollout',
    table: 'readWrite',
    sends: ['rollout'],
    idempotent: true,
    summary: 'Roll a template version out to its tenants in waves (or a dry run of it)',
    docs: {
      description:
        'Applies a version of the template (the latest unless `version` says which) to its tenants, all of them ' +
        'or those listed, in waves of `waveSize` (10% of them by default) with `pauseSeconds` between waves. Each ' +
        'tenant is applied once, under its own apply lock and rules; an inactive one keeps the version pending ' +
        'until its activation; with `reload`, each applied tenant gets its reload plan queued. After ' +
        '`failureBudget` failed tenants the rollout pauses itself. With `dryRun` it answers 200 at once with what ' +
        'each of the first 100 tenants would get (versions, tables created, rebuilt and unchanged, reload plan) ' +
        'and writes nothing; otherwise 202 with the rollout, which runs in the background: follow it with GET ' +
        '…/rollouts/{rolloutId} or the `rollout.*` events. One rollout per template runs (or is paused) at a time.',
      success: { 200: 'A dry run: what would happen, nothing written.', 202: 'The rollout, started.' },
      answer: { data: 'rollout-started' },
    },
  },
  {
    method: 'GET',
    path: '/tenants/templates/{id}/rollouts',
    handler: 'list-rollouts',
    auth: ['client'],
    table: 'read',
    paginated: true,
    summary: "The template's rollouts, newest first",
    docs: {
      description:
        "The template's rollouts, newest first, each with its state and its counts as of its last finished wave " +
        '(GET …/rollouts/{rolloutId} has the running wave too). Rollouts are kept as long as runs are (90 days by ' +
        'default). It changes nothing.',
      answer: { data: 'rollout', list: true },
    },
  },
  {
    method: 'GET',
    path: '/tenants/templates/{id}/rollouts/{rolloutId}',
    handler: 'get-rollout',
    auth: ['client'],
    table: 'read',
    summary: 'A rollout: its state, counts per outcome and waves',
    docs: {
      description:
        'One rollout: its state (`running`, `paused` with its reason, `finished`, `cancelled`), its tenants by ' +
        'outcome (`pending`, `applied`, `unchanged`, `pending_activation`, `failed`), and each wave with its own ' +
        'counts; GET …/tenants lists each tenant with its outcome and error. Poll it, or take the `rollout.*` ' +
        'events, to follow the rollout. It changes nothing.',
      answer: { data: 'rollout' },
    },
  },
  {
    method: 'GET',
    path: '/tenants/templates/{id}/rollouts/{rolloutId}/tenants',
    handler: 'list-rollout-tenants',
    auth: ['client'],
    table: 'read',
    paginated: true,
    query: [
      {
        name: 'outcome',
        description: 'Only the tenants with this outcome (listed by tenant id); without it, every tenant, wave by wave.',
        schema: { enum: ['pending', 'applied', 'unchanged', 'pending_activation', 'failed'] },
      },
    ],
    summary: "A rollout's tenants: each one's wave, outcome and error",
    docs: {
      description:
        "The rollout's tenants, each with its wave, outcome, the version it had, the error that failed it and the " +
        'reload plan its apply made. `outcome=failed` lists the tenants to look at (the error is what the apply ' +
        'answered: a resource limit, a flow cycle, …). It changes nothing.',
      answer: { data: 'rollout-tenant', list: true },
    },
  },
  {
    method: 'POST',
    path: '/tenants/templates/{id}/rollouts/{rolloutId}/pause',
    audit: { resource: 'rollout', idParameter: 'rolloutId' },
    handler: 'pause-rollout',
    auth: ['client'],
    table: 'readWrite',
    sends: ['webhook'],
    summary: 'Pause a running rollout',
    docs: {
      description:
        'Pauses a running rollout: no tenant starts after this (those being applied finish). It stays the ' +
        "template's rollout until it is resumed or cancelled; a `rollout.paused` event says so (reason `asked`). " +
        'Anything but a running rollout is 409 `rollout_state`.',
      answer: { data: 'rollout' },
    },
  },
  {
    method: 'POST',
    path: '/tenants/templates/{id}/rollouts/{rolloutId}/resume',
    audit: { resource: 'rollout', idParameter: 'rolloutId' },
    handler: 'resume-rollout',
    auth: ['client'],
    table: 'readWrite',
    sends: ['rollout'],
    summary: 'Resume a paused rollout',
    docs: {
      description:
        'Resumes a paused rollout (paused when asked, or by its failure budget) where it stopped; its failure ' +
        'budget counts afresh from now. Anything but a paused rollout is 409 `rollout_state`.',
      answer: { data: 'rollout' },
    },
  },
  {
    method: 'POST',
    path: '/tenants/templates/{id}/rollouts/{rolloutId}/cancel',
    audit: { resource: 'rollout', idParameter: 'rolloutId' },
    handler: 'cancel-rollout',
    auth: ['client'],
    table: 'readWrite',
    sends: ['webhook'],
    summary: 'Cancel a rollout (what it applied stays)',
    docs: {
      description:
        'Cancels a running or paused rollout: it stops before its next tenant; the tenants it applied keep the ' +
        'version, the others stay as they are (`pending`), and the template may have a new rollout. A ' +
        '`rollout.finished` event says so (state `cancelled`). A rollout that ended is 409 `rollout_state`.',
      answer: { data: 'rollout' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/templates/apply',
    audit: { resource: 'template' },
    handler: 'apply-template',
    auth: ['tenant'],
    body: 'apply-template',
    table: 'readWrite',
    summary: 'Apply a template to the tenant (spec 4.4)',
    docs: {
      description:
        "Writes the latest version of one of the client's templates into the tenant of the token (spec 4.4): " +
        'resources are matched by key, those in the template are created or overwritten (their ids kept), those ' +
        'not in it are left alone. Answers the `reloadPlan`: the flows that fill the tables this apply created or ' +
        "rebuilt (and those the tenant's creation, or an apply that stopped half-way, left empty), in dependency " +
        'order; those tables stay empty until you send `{"items": reloadPlan}` to POST /tenant/templates/reload. ' +
        'Call it after publishing a new version, and once after creating a tenant with a template; applying again ' +
        'rewrites only what differs, and an inactive tenant or an apply already running is 409.',
      success: { 200: 'Applied: the loads that fill what the template created or rebuilt, in dependency order (spec 4.4).' },
      answer: { schema: 'apply-template-answer' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/templates/reload',
    audit: { resource: 'reload', queuedChange: true },
    handler: 'reload',
    auth: ['tenant'],
    body: 'reload',
    table: 'readWrite',
    sends: ['reload'],
    idempotent: true,
    summary: 'Queue the loads of flows, per agent and in dependency order (spec 4.5)',
    docs: {
      description:
        "Queues the loads of flows (spec 4.5), usually an apply's `reloadPlan`: each item names a flow and the " +
        'agent (`tokenId`) that runs it. Each online agent gets its loads on its own FIFO queue, in dependency ' +
        'order; the loads of an agent with no heartbeat in the last 2 minutes are `skipped_offline` and not queued ' +
        '(send them again once it is online). Every item is checked first: a flow or an agent that is not the ' +
        "tenant's is 400, with nothing queued. The reload worker then makes each load a `dispatched` run that its " +
        'agent takes with its next heartbeat (GET /tenant/runs); without an Idempotency-Key, a repeat queues the ' +
        'loads again.',
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
    query: wholeListQuery,
    summary: "The tenant's agents, online or not",
    docs: {
      description:
        "The tenant's agents: id, nome (the slot that template connections name), whether it is the default agent, " +
        'whether it is online (a heartbeat in the last 2 minutes) and its last heartbeat. Check it before a ' +
        "reload: an offline agent's loads are skipped. The whole list (at most the 50 agents a tenant may have) " +
        'unless `limit` is sent. It changes nothing.',
      answer: { data: 'agent', list: true },
    },
  },
  {
    method: 'POST',
    path: '/tenant/agents',
    audit: { resource: 'agent' },
    handler: 'create-agent',
    auth: ['tenant'],
    body: 'create-agent',
    table: 'readWrite',
    idempotent: true,
    summary: 'Add an agent (its token is shown once)',
    docs: {
      description:
        'Adds an agent to the tenant, with a token that only this answer shows. Its name is a slot: the flows of a ' +
        'connection whose `agent` names it run on this agent, all others on the default agent; names are unique in ' +
        'the tenant. Call it to run loads on more than one machine; a retry without an Idempotency-Key is 409 ' +
        '`agent_name_taken`, the first attempt having taken the name.',
      answer: { data: 'agent-created' },
      success: { 201: 'The agent, with its token (shown only here).' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/agents/{id}/token',
    audit: { resource: 'agent' },
    handler: 'rotate-agent-token',
    auth: ['tenant'],
    body: 'rotate-token',
    bodyOptional: true,
    table: 'readWrite',
    summary: 'Give an agent a new token (the previous one keeps working for a grace period)',
    docs: {
      description:
        "Issues a new token for one of the tenant's agents, shown only in this answer. This is how the default agent, " +
        'created with the tenant, gets its first token. The token it replaces keeps working for ' +
        '`previousValidForSeconds` (24 hours without a body, at most 7 days; `previousExpiresAt` says until when), so ' +
        'the agent can be reconfigured without missing a beat; GET /tenant/agents shows when each was last used, and ' +
        'DELETE /tenant/agents/{id}/token/previous ends the previous one. Only one previous token lives at a time: ' +
        'rotating again within the grace period ends the one the last rotation kept. A token that may have leaked: ' +
        'send `previousValidForSeconds: 0`, which ends it at once.',
      answer: { data: 'token-rotated' },
    },
  },
  {
    method: 'DELETE',
    path: '/tenant/agents/{id}/token/previous',
    audit: { resource: 'agent' },
    handler: 'end-previous-agent-token',
    auth: ['tenant'],
    table: 'readWrite',
    summary: "End an agent's previous token now",
    docs: {
      description:
        'Ends at once the agent token the last rotation kept working (POST /tenant/agents/{id}/token), before its grace ' +
        'period is over: call it once the agent runs with the new token (GET /tenant/agents shows when the previous one ' +
        'was last used). The current token is not affected. `ended` says whether a previous token was still working; ' +
        'when none was, the answer is the same success with `ended: false`, so calling it again is harmless.',
      answer: { data: 'previous-token-ended' },
    },
  },
  {
    method: 'GET',
    path: '/tenant/runs',
    handler: 'list-runs',
    auth: ['tenant'],
    table: 'read',
    paginated: true,
    query: [
      {
        name: 'status',
        description: 'Only the runs with this status (`failed`: the runs to look at, or to retry).',
        schema: { enum: ['dispatched', 'running', 'succeeded', 'failed'] },
      },
      {
        name: 'agent',
        description: 'Only the runs of this agent (its id: `tokenId` in a run).',
        schema: { type: 'integer', minimum: 1, maximum: 999_999 },
      },
      {
        name: 'flowId',
        description: 'Only the runs of this flow.',
        schema: { type: 'integer', minimum: 1, maximum: 999_999 },
      },
    ],
    summary: "The tenant's runs, newest first",
    docs: {
      description:
        "The tenant's runs, newest first: each load the reload worker handed to an agent, with its flow, agent, " +
        "context, batch, status (`dispatched`, `running`, `succeeded` or `failed`) and the agent's message. Poll " +
        "it to follow a reload, or a schedule's loads, to the end; runs are kept for a limited time (90 days by " +
        'default). `status`, `agent` and `flowId` narrow it (all those given must match); a filtered page reads at ' +
        'most 1,000 runs, so it may hold fewer than `limit`, even none, with a `nextCursor` to go on from: follow ' +
        '`nextCursor` until it is null. It changes nothing.',
      answer: { data: 'run', list: true },
    },
  },
  {
    method: 'GET',
    path: '/tenant/runs/{id}',
    handler: 'get-run',
    auth: ['tenant'],
    table: 'read',
    summary: "A run: its flow, agent, context, status and the agent's message",
    docs: {
      description:
        "One of the tenant's runs, as GET /tenant/runs lists it: its flow, agent (`tokenId`), context, batch, status " +
        "and the agent's message, and `retryOf` when it retries a failed run. Poll it to follow one load to its end; " +
        'a run that has expired (90 days by default) is 404 `run_not_found`. It changes nothing.',
      answer: { data: 'run' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/runs/{id}/retry',
    audit: { resource: 'run', queuedChange: true },
    handler: 'retry-run',
    auth: ['tenant'],
    table: 'readWrite',
    sends: ['reload'],
    idempotent: true,
    summary: "Queue a failed run's load again (same flow, agent and context)",
    docs: {
      description:
        "Queues a failed run's load once more, as a reload of its flow would: to the same agent, with the same " +
        "context, on the agent's own FIFO queue. The reload worker makes it a new `dispatched` run whose `retryOf` " +
        'names the failed one (GET /tenant/runs?flowId=… lists it), which the agent takes with its next heartbeat; ' +
        'the failed run stays as it was. Only a failed run can go again (409 `run_not_failed`), of an active tenant ' +
        '(409 `tenant_inactive`), to an agent with a heartbeat in the last 2 minutes (409 `agent_offline`): then ' +
        'nothing is queued. Each call queues one load: send an Idempotency-Key to make a retry safe to repeat.',
      success: { 202: 'The load, queued.' },
      answer: { data: 'run-retry' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/users',
    audit: { resource: 'user' },
    handler: 'create-user',
    auth: ['tenant'],
    body: 'create-user',
    table: 'readWrite',
    idempotent: true,
    summary: 'Add a user (login unique in the tenant)',
    docs: {
      description:
        'Adds a user to the tenant: a login unique in the tenant, a nome and an optional e-mail. The user can then ' +
        'get login tokens (POST /tenant/login), join groups, own datamarts and receive permissions. Call it when a ' +
        'person gets access to the BI; a retry without an Idempotency-Key is 409 `login_taken`.',
      answer: { data: 'user' },
      success: { 201: 'The user.' },
    },
  },
  {
    method: 'GET',
    path: '/tenant/users',
    handler: 'list-users',
    auth: ['tenant'],
    table: 'read',
    query: [
      ...wholeListQuery,
      {
        name: 'login',
        description:
          'Only the user with this login, compared as logins are kept unique (case and compatibility forms folded, ' +
          'invisible characters dropped): a list of one, or none. Read from the login itself, never by walking the list.',
        schema: { type: 'string', minLength: 1, maxLength: 200 },
      },
    ],
    summary: 'Every user with their groups and effective permissions (spec 4.10)',
    docs: {
      description:
        'Every user of the tenant with their groups and their effective permissions on each datamart table (spec ' +
        "4.10): their own record on a table if they have one, else their groups' records, expired ones left out. " +
        'Use it to build menus or to review who sees what; it is the whole list unless `limit` is sent. `login` ' +
        'answers only the user with that login (a list of one, or none), read from the login directly. It changes ' +
        'nothing.',
      answer: { data: 'user-with-access', list: true },
    },
  },
  {
    method: 'GET',
    path: '/tenant/users/{id}',
    handler: 'get-user',
    auth: ['tenant'],
    table: 'read',
    summary: 'A user with their groups',
    docs: {
      description:
        'One user of the tenant with their groups and their effective permissions on each datamart table, as GET ' +
        "/tenant/users shows each user. Read it after changing a user's groups or permissions to see what they can " +
        'now see. It changes nothing.',
      answer: { data: 'user-with-access' },
    },
  },
  {
    method: 'PATCH',
    path: '/tenant/users/{id}',
    audit: { resource: 'user' },
    handler: 'update-user',
    auth: ['tenant'],
    body: 'update-user',
    table: 'readWrite',
    summary: "Change a user's login, name or e-mail",
    docs: {
      description:
        "Changes a user's login, nome or e-mail (`null` removes the e-mail); fields left out keep their values. A " +
        "new login must be free in the tenant (409 otherwise), and changing it ends the user's BI sessions and " +
        'voids the login tokens issued for the old one. Groups and permissions stay with the user.',
      answer: { data: 'user' },
    },
  },
  {
    method: 'DELETE',
    path: '/tenant/users/{id}',
    audit: { resource: 'user' },
    handler: 'delete-user',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'Unlink a user: their login tokens and sessions stop working',
    docs: {
      description:
        'Unlinks a user from the tenant: their login tokens and BI sessions stop working at once, and their login ' +
        'is free to be used again. Their group memberships, datamart ownerships and permission records are deleted ' +
        'right after (by the follow-up sweeper, should this request stop first). Deleting the user again is 404.',
      answer: { data: 'done' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/groups',
    audit: { resource: 'group' },
    handler: 'create-group',
    auth: ['tenant'],
    body: 'create-group',
    table: 'readWrite',
    idempotent: true,
    summary: 'Add a group',
    docs: {
      description:
        'Adds a group to the tenant, with no members. Put users in it (PUT /tenant/groups/{id}/members/{userId}) ' +
        'and give it permissions on datamarts: its members inherit them wherever they have no record of their own. ' +
        'A retry without an Idempotency-Key adds a second group.',
      answer: { data: 'group' },
      success: { 201: 'The group.' },
    },
  },
  {
    method: 'GET',
    path: '/tenant/groups',
    handler: 'list-groups',
    auth: ['tenant'],
    table: 'read',
    query: wholeListQuery,
    summary: 'The groups and their members',
    docs: {
      description:
        "Every group of the tenant with its members' user ids. Use it to see who inherits a group's permissions. " +
        'The whole list (at most the 1,000 groups a tenant may have) unless `limit` is sent. It changes nothing.',
      answer: { data: 'group', list: true },
    },
  },
  {
    method: 'GET',
    path: '/tenant/groups/{id}',
    handler: 'get-group',
    auth: ['tenant'],
    table: 'read',
    summary: 'One group and its members',
    docs: {
      description:
        "One group of the tenant with its members' user ids, as GET /tenant/groups shows each group. Read it after " +
        'changing its members. It changes nothing.',
      answer: { data: 'group' },
    },
  },
  {
    method: 'DELETE',
    path: '/tenant/groups/{id}',
    audit: { resource: 'group' },
    handler: 'delete-group',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'Remove a group and its memberships',
    docs: {
      description:
        'Removes a group: its members stop inheriting its permissions at once; the users themselves stay. Its ' +
        'memberships and datamart permission records are deleted right after (by the follow-up sweeper, should ' +
        'this request stop first). Deleting it again is 404.',
      answer: { data: 'done' },
    },
  },
  {
    method: 'PUT',
    path: '/tenant/groups/{id}/members/{userId}',
    audit: { resource: 'group' },
    handler: 'add-group-member',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'Put a user in a group',
    docs: {
      description:
        "Puts a user of the tenant in a group: from now on the user inherits the group's datamart permissions " +
        'wherever they have no record of their own. Idempotent: for a user who is a member already, nothing ' +
        'changes.',
      answer: { data: 'membership' },
    },
  },
  {
    method: 'DELETE',
    path: '/tenant/groups/{id}/members/{userId}',
    audit: { resource: 'group' },
    handler: 'remove-group-member',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'Take a user out of a group',
    docs: {
      description:
        'Takes a user out of a group: they stop inheriting its permissions at once. Idempotent: removing a user ' +
        'who is not a member changes nothing (the group and the user must exist, else 404).',
      answer: { data: 'membership' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/datamart',
    audit: { resource: 'datamart' },
    handler: 'create-datamart',
    auth: ['tenant'],
    body: 'create-datamart',
    table: 'readWrite',
    idempotent: true,
    summary: 'Create a datamart over tables of the tenant, with owners',
    docs: {
      description:
        "Creates a datamart: a name, a set of the tenant's tables (from its templates) and the users who own it " +
        "(spec 2.3). Tables and owners must be the tenant's (400 names each one that is not). Nobody gets access " +
        'from the datamart alone: give it with PUT /tenant/datamart/{id}/user/{userId} or …/group/{groupId}. A ' +
        'retry without an Idempotency-Key creates a second datamart.',
      success: { 201: 'The datamart (spec 2.3).' },
      answer: { data: 'datamart' },
    },
  },
  {
    method: 'GET',
    path: '/tenant/datamart',
    handler: 'list-datamarts',
    auth: ['tenant'],
    table: 'read',
    query: wholeListQuery,
    summary: 'The datamarts with their tables, columns and owners (spec 4.7)',
    docs: {
      description:
        'Every datamart of the tenant with its tables (and their columns) and its owners (spec 4.7); the whole ' +
        'list unless `limit` is sent. Read it for the table ids and column names that permission records use. It ' +
        'changes nothing.',
      success: { 200: 'The datamarts (spec 4.7).' },
      answer: { data: 'datamart', list: true },
    },
  },
  {
    method: 'GET',
    path: '/tenant/datamart/{id}',
    handler: 'get-datamart',
    auth: ['tenant'],
    table: 'read',
    summary: 'One datamart with its tables, columns and owners',
    docs: {
      description:
        'One datamart of the tenant with its tables, their columns and its owners (spec 2.3). Read it for the ' +
        'table ids and column names that its permission records may use. It changes nothing.',
      success: { 200: 'The datamart (spec 2.3).' },
      answer: { data: 'datamart' },
    },
  },
  {
    method: 'PATCH',
    path: '/tenant/datamart/{id}',
    audit: { resource: 'datamart' },
    handler: 'update-datamart',
    auth: ['tenant'],
    body: 'update-datamart',
    table: 'readWrite',
    summary: 'Rename a datamart or replace its tables or owners',
    docs: {
      description:
        'Renames a datamart, or replaces its list of tables or of owners (each list replaced whole; fields left ' +
        "out keep their values). Tables and owners must be the tenant's (400). Permission records on a table taken " +
        'out stop counting at once and are deleted right after (by the follow-up sweeper, should this request stop ' +
        'first).',
      success: { 200: 'The datamart (spec 2.3).' },
      answer: { data: 'datamart' },
    },
  },
  {
    method: 'DELETE',
    path: '/tenant/datamart/{id}',
    audit: { resource: 'datamart' },
    handler: 'delete-datamart',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'Delete a datamart and its permission records',
    docs: {
      description:
        'Deletes a datamart: it is gone at once, and no permission record on it counts any more. Those records are ' +
        'deleted right after (by the follow-up sweeper, should this request stop first); the tables, users and ' +
        'groups stay. Deleting it again is 404.',
      answer: { data: 'done' },
    },
  },
  {
    method: 'GET',
    path: '/tenant/datamart/{id}/user',
    handler: 'list-user-permissions',
    auth: ['tenant'],
    table: 'read',
    query: wholeListQuery,
    summary: 'User permissions of a datamart (spec 4.8)',
    docs: {
      description:
        'The user permission records on a datamart (spec 4.8), as they were set: per user and table, whether the ' +
        'table is visible and exportable, until when, the hidden columns and the row filters, not combined with ' +
        "the users' groups (GET …/user/{userId}/effective does that). The whole list unless `limit` is sent. It " +
        'changes nothing.',
      success: { 200: 'The records (spec 4.8).' },
      answer: { data: 'user-permission', list: true },
    },
  },
  {
    method: 'GET',
    path: '/tenant/datamart/{id}/group',
    handler: 'list-group-permissions',
    auth: ['tenant'],
    table: 'read',
    query: wholeListQuery,
    summary: 'Group permissions of a datamart (spec 4.9)',
    docs: {
      description:
        'The group permission records on a datamart (spec 4.9), as they were set: per group and table, whether the ' +
        'table is visible and exportable, until when, the hidden columns and the row filters. The whole list ' +
        'unless `limit` is sent. It changes nothing.',
      success: { 200: 'The records (spec 4.9).' },
      answer: { data: 'group-permission', list: true },
    },
  },
  {
    method: 'PUT',
    path: '/tenant/datamart/{id}/user/{userId}',
    audit: { resource: 'datamart' },
    handler: 'replace-user-permissions',
    auth: ['tenant'],
    body: 'set-permissions',
    table: 'readWrite',
    summary: "Replace a user's permissions on a datamart",
    docs: {
      description:
        "Sets a user's permission records on a datamart: afterwards the user has exactly the records sent, at most " +
        'one per table, and their records on other tables of it are removed. Each record says whether the table is ' +
        'visible, whether it may be exported, until when, which columns are hidden and which rows pass; on a table ' +
        "where the user has a record of their own, their groups' records do not apply. Tables, columns and expiry " +
        'are checked (400); sending the same body again changes nothing.',
      success: { 200: "The user's records now." },
      answer: { data: 'user-permission', list: true },
    },
  },
  {
    method: 'DELETE',
    path: '/tenant/datamart/{id}/user/{userId}',
    audit: { resource: 'datamart' },
    handler: 'remove-user-permissions',
    auth: ['tenant'],
    table: 'readWrite',
    summary: "Remove a user's permissions on a datamart",
    docs: {
      description:
        'Removes every permission record a user has on a datamart: from now on they see its tables only through ' +
        'their groups. Idempotent: a user with no records keeps none (the datamart and the user must exist, else ' +
        '404).',
      success: { 200: "The user's records now (none)." },
      answer: { data: 'user-permission', list: true },
    },
  },
  {
    method: 'PUT',
    path: '/tenant/datamart/{id}/group/{groupId}',
    audit: { resource: 'datamart' },
    handler: 'replace-group-permissions',
    auth: ['tenant'],
    body: 'set-permissions',
    table: 'readWrite',
    summary: "Replace a group's permissions on a datamart",
    docs: {
      description:
        "Sets a group's permission records on a datamart: afterwards the group has exactly the records sent, at " +
        'most one per table, and its records on other tables of it are removed. Each member without a record of ' +
        "their own on a table gets the group's record as a grant, kept whole (with several groups, a cell is " +
        'visible when one grant shows it). Tables, columns and expiry are checked (400); sending the same body ' +
        'again changes nothing.',
      success: { 200: "The group's records now." },
      answer: { data: 'group-permission', list: true },
    },
  },
  {
    method: 'DELETE',
    path: '/tenant/datamart/{id}/group/{groupId}',
    audit: { resource: 'datamart' },
    handler: 'remove-group-permissions',
    auth: ['tenant'],
    table: 'readWrite',
    summary: "Remove a group's permissions on a datamart",
    docs: {
      description:
        'Removes every permission record a group has on a datamart: its members stop inheriting access to its ' +
        'tables from it at once. Idempotent: a group with no records keeps none (the datamart and the group must ' +
        'exist, else 404).',
      success: { 200: "The group's records now (none)." },
      answer: { data: 'group-permission', list: true },
    },
  },
  {
    method: 'GET',
    path: '/tenant/datamart/{id}/user/{userId}/effective',
    handler: 'effective-permissions',
    auth: ['tenant'],
    table: 'read',
    summary: "A user's effective permissions on each table of a datamart",
    docs: {
      description:
        'What a user really sees of each table of a datamart: their own record if they have one, else each of ' +
        "their groups' records as a grant kept whole, expired records left out; with no record there is no access. " +
        'Use it to check access before opening the BI for the user, or to explain what they see. It changes ' +
        'nothing. Always the whole list, one entry per table of the datamart, and no `limit`: each entry is computed ' +
        "from the user's own and all their groups' records on the datamart, read together, so a page would only " +
        'slice that computation, not read less.',
      answer: { data: 'effective-permission', list: true },
    },
  },
  {
    method: 'PUT',
    path: '/tenant/schedules/{id}',
    audit: { resource: 'schedule' },
    handler: 'put-schedule',
    auth: ['tenant'],
    body: 'schedule.v2',
    yaml: true,
    table: 'readWrite',
    ifMatch: true,
    summary: 'Create or replace a schedule file (spec 2.7), YAML or JSON; If-Match guards against lost updates',
    docs: {
      description:
        'Creates the schedule of this id, or replaces it: a schedule file (spec 2.7) naming flows of the tenant ' +
        'and the triggers that start them, in a time zone; every problem is reported at once (400). The service ' +
        'sets the version and the audit fields and computes the next fire; when it comes, the flows are queued to ' +
        'their agents as a reload queues them (not while the tenant is inactive). Sending the same content again ' +
        'changes nothing (same version, 200).',
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
    docs: {
      description:
        "The tenant's schedules, one line each: name, whether active, time zone, version, how many triggers and " +
        'flows, and the next fire (null when there is none). Check `nextFireAt` to see that a schedule will run. ' +
        'It changes nothing.',
      answer: { data: 'schedule-summary', list: true },
    },
  },
  {
    method: 'GET',
    path: '/tenant/schedules/{id}',
    handler: 'get-schedule',
    auth: ['tenant'],
    table: 'read',
    summary: 'A schedule file, as YAML or JSON by Accept, with its version as ETag',
    docs: {
      description:
        'One schedule file as stored, with the version and audit fields the service set: YAML when Accept prefers ' +
        '`application/yaml`, else JSON. Read it before editing: its ETag is the version to send back as If-Match. ' +
        'It changes nothing.',
      success: { 200: 'The schedule file, as YAML when Accept prefers it, else JSON.' },
      answer: scheduleFile,
      headers: scheduleVersion,
    },
  },
  {
    method: 'DELETE',
    path: '/tenant/schedules/{id}',
    audit: { resource: 'schedule' },
    handler: 'delete-schedule',
    auth: ['tenant'],
    table: 'readWrite',
    ifMatch: true,
    summary: 'Delete a schedule (If-Match optional)',
    docs: {
      description:
        'Deletes a schedule: it fires no more. With If-Match only the version named is deleted (412 otherwise); ' +
        'without it, whatever version is current. Deleting it again is 404.',
      answer: { data: 'done' },
    },
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
    docs: {
      description:
        "The next fire instants of a schedule (`count` of them, 10 by default), each in UTC and in the schedule's " +
        'time zone, with daylight-saving gaps and overlaps resolved as the firing resolves them. Use it to check ' +
        'triggers before relying on them; an inactive schedule lists none. It changes nothing.',
      answer: { data: 'schedule-preview' },
    },
  },
  {
    method: 'GET',
    path: '/tenant/schedules/{id}/runs',
    handler: 'list-schedule-runs',
    auth: ['tenant'],
    table: 'read',
    paginated: true,
    summary: "A schedule's fires, newest first, with each flow's status",
    docs: {
      description:
        "A schedule's fires, newest first: the slot (in UTC and local time), when it fired, the schedule's " +
        'version, and what became of each flow (`enqueued`, `skipped_offline` or `flow_not_found`). Use it to see ' +
        'whether a schedule ran and why a flow was not loaded; the loads themselves are in GET /tenant/runs. It ' +
        'changes nothing.',
      answer: { data: 'schedule-run', list: true },
    },
  },
  {
    method: 'GET',
    path: '/tenant/settings',
    handler: 'get-settings',
    auth: ['tenant'],
    table: 'read',
    summary: "The tenant's allowed alert channels (the webhook URL and its state, never the secret)",
    docs: {
      description:
        "The tenant's alert channels: the webhook URL, whether it is enabled (and why it was disabled), how many " +
        'attempts it takes at once, the state of its endpoint and when its signing secret was made; never the ' +
        'secret itself. Check it when deliveries fail or wait. It changes nothing.',
      answer: { data: 'settings' },
    },
  },
  {
    method: 'PATCH',
    path: '/tenant/settings',
    audit: { resource: 'settings' },
    handler: 'update-settings',
    auth: ['tenant'],
    body: 'update-settings',
    table: 'readWrite',
    summary: 'Set, change, pause, re-enable or remove the webhook channel (its signing secret is shown once)',
    docs: {
      description:
        "Sets, changes or removes the tenant's webhook channel. A URL set for the first time gets a signing " +
        'secret, shown only in this answer (keep it to verify signatures); a new URL keeps the secret; `enabled: ' +
        "false` turns the channel off and `true` back on (also after a receiver's 410 disabled it); `null` removes " +
        'the webhook and its secrets. Each attempt goes to the URL set at that moment, and one made while the ' +
        'channel is off or removed fails (redeliver it once it is back).',
      answer: { data: 'settings' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/settings/webhook/secret',
    audit: { resource: 'settings' },
    handler: 'rotate-webhook-secret',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'A new webhook signing secret (shown once); the previous one also signs for 24 hours',
    docs: {
      description:
        'Makes a new signing secret for the webhook, shown only in this answer. For 24 hours deliveries carry a ' +
        'signature with the previous secret too, so the receiver can switch without losing one; older secrets stop ' +
        'signing at once. 409 `no_webhook` when no webhook is set.',
      answer: { data: 'settings' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/alerts',
    audit: { resource: 'alert' },
    handler: 'create-alert',
    auth: ['tenant'],
    body: 'create-alert',
    table: 'readWrite',
    idempotent: true,
    summary: 'Create an alert: its channels and content blocks',
    docs: {
      description:
        'Creates an alert of the tenant: its name, its channels (the webhook on or off) and its content blocks ' +
        '(text, ai, report, chart), each with what it sends when a delivery brings no content. Creating it sends ' +
        'nothing: deliveries come from POST /tenant/alerts/{id}/fire and …/send. A retry without an ' +
        'Idempotency-Key creates a second alert.',
      answer: { data: 'alert' },
      success: { 201: 'The alert.' },
    },
  },
  {
    method: 'GET',
    path: '/tenant/alerts',
    handler: 'list-alerts',
    auth: ['tenant'],
    table: 'read',
    paginated: true,
    summary: "The tenant's alerts",
    docs: {
      description:
        "The tenant's alerts, with their channels and content blocks. Use it to find an alert's id. It changes " + 'nothing.',
      answer: { data: 'alert', list: true },
    },
  },
  {
    method: 'GET',
    path: '/tenant/alerts/{id}',
    handler: 'get-alert',
    auth: ['tenant'],
    table: 'read',
    summary: 'An alert',
    docs: {
      description:
        'One alert of the tenant: its name, channels and content blocks. Read it before changing it. It changes ' + 'nothing.',
      answer: { data: 'alert' },
    },
  },
  {
    method: 'PATCH',
    path: '/tenant/alerts/{id}',
    audit: { resource: 'alert' },
    handler: 'update-alert',
    auth: ['tenant'],
    body: 'update-alert',
    table: 'readWrite',
    summary: "Change an alert's name, channels or content",
    docs: {
      description:
        'Replaces the fields sent of an alert (its name, channels or content blocks); fields left out keep their ' +
        'values. Deliveries queued already keep the body built when they were queued.',
      answer: { data: 'alert' },
    },
  },
  {
    method: 'DELETE',
    path: '/tenant/alerts/{id}',
    audit: { resource: 'alert' },
    handler: 'delete-alert',
    auth: ['tenant'],
    table: 'readWrite',
    summary: 'Delete an alert (its deliveries stay readable until they expire)',
    docs: {
      description:
        'Deletes an alert: it can no longer be fired, sent or previewed. Its deliveries stay readable until they ' +
        'expire, and those queued already are still attempted. Deleting it again is 404.',
      answer: { data: 'done' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/alerts/{id}/preview',
    handler: 'preview-alert',
    auth: ['tenant'],
    body: 'alert-delivery',
    table: 'read',
    summary: 'The payload a delivery would send; sends nothing',
    docs: {
      description:
        'Builds the webhook body a delivery of this alert would POST for this user and content (spec 6), with its ' +
        "size and whether it is within the 4 MB limit. Use it to test an alert's content or a receiver's parser: " +
        'nothing is queued, sent or stored.',
      answer: { data: 'alert-preview' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/alerts/{id}/send',
    audit: { resource: 'alert' },
    handler: 'send-alert',
    ...queuesDelivery,
    summary: 'Force-send an alert: queue a webhook delivery and return its id',
    docs: {
      ...queuesDelivery.docs,
      description:
        "A user's force-send: builds the alert's webhook body for the user (the content sent, else the alert's own " +
        'blocks) and queues a delivery, recorded with trigger `send`; the webhook deliverer POSTs it, signed, and ' +
        'retries it on failure. Follow it with GET /tenant/deliveries/{id}. Refused with nothing queued when the ' +
        "tenant is inactive or the alert's or the tenant's webhook channel is off (409), or when the body would be " +
        'over 4 MB (413).',
    },
  },
  {
    method: 'POST',
    path: '/tenant/alerts/{id}/fire',
    audit: { resource: 'alert' },
    handler: 'fire-alert',
    ...queuesDelivery,
    summary: 'The platform fired an alert for a user, with its generated content: queue a webhook delivery',
    docs: {
      ...queuesDelivery.docs,
      description:
        'Called when the platform fires an alert for a user, with the content it generated: builds the webhook ' +
        'body and queues a delivery, recorded with trigger `fire`; the webhook deliverer POSTs it, signed, and ' +
        'retries it on failure. Follow it with GET /tenant/deliveries/{id}. Refused with nothing queued when the ' +
        "tenant is inactive or the alert's or the tenant's webhook channel is off (409), or when the body would be " +
        'over 4 MB (413).',
    },
  },
  {
    method: 'GET',
    path: '/tenant/alerts/{id}/deliveries',
    handler: 'list-deliveries',
    auth: ['tenant'],
    table: 'read',
    paginated: true,
    summary: "An alert's deliveries, newest first (kept 30 days)",
    docs: {
      description:
        'The deliveries of one alert, newest first, each with its status (`queued`, `retrying`, `delivered` or ' +
        '`failed`), its attempts and its next attempt. They stay readable after the alert is deleted, until they ' +
        'expire (30 days by default). It changes nothing.',
      answer: { data: 'delivery', list: true },
    },
  },
  {
    method: 'GET',
    path: '/tenant/deliveries',
    handler: 'list-tenant-deliveries',
    auth: ['tenant'],
    table: 'read',
    paginated: true,
    query: [deliveryStatusQuery],
    summary: "Every delivery of the tenant's alerts, newest first (kept 30 days)",
    docs: {
      description:
        "The deliveries of all the tenant's alerts, newest first, each with its alert, status (`queued`, `retrying`, " +
        "`delivered` or `failed`), attempts (each with the receiver's status code and the first 1 KB of its answer, " +
        'or the error) and next attempt; `status=failed` lists the ones to look at. Deliveries of deleted alerts ' +
        'stay until they expire (30 days by default). It changes nothing.',
      answer: { data: 'delivery', list: true },
    },
  },
  {
    method: 'GET',
    path: '/tenant/audit',
    handler: 'list-tenant-audit',
    auth: ['tenant'],
    table: 'read',
    paginated: true,
    query: [...auditQuery, agentChainQuery],
    summary: "The tenant's audit trail: every change to it, newest first",
    docs: {
      description:
        "The audit records of the tenant's chain, newest first: every change made with its token or by its client on it " +
        "(its activation, its token, its variables); with `agent`, that agent's chain: its run reports. " +
        auditFilters +
        auditRecordText,
      ...auditDocs,
    },
  },
  {
    method: 'GET',
    path: '/tenants/audit',
    handler: 'list-client-audit',
    auth: ['client'],
    table: 'read',
    paginated: true,
    query: [
      ...auditQuery,
      {
        name: 'tenantId',
        description:
          "Only the records of this tenant's chain (another client's tenant is 404 with `agent`, an empty list without).",
        schema: { type: 'integer', minimum: 1, maximum: 999_999 },
      },
      { ...agentChainQuery, description: `With \`tenantId\`: ${agentChainQuery.description}` },
    ],
    summary: "The client's audit trail: its changes and its tenants', newest first",
    docs: {
      description:
        "The audit records of the client's own chain (its templates, rollouts, settings, tenant creations and " +
        "deletions) and of its tenants' chains, newest first by time; with `tenantId` and `agent`, that agent's chain " +
        'of run reports. ' +
        auditFilters +
        auditRecordText,
      ...auditDocs,
    },
  },
  {
    method: 'GET',
    path: '/tenant/deliveries/{id}',
    handler: 'get-delivery',
    auth: ['tenant'],
    table: 'read',
    summary: 'A delivery: status, attempts (time, status code or error), next attempt',
    docs: {
      description:
        "One delivery: its status, every attempt (when, and the receiver's status code or the error), the next " +
        'attempt and, once failed, why. Use it to follow a delivery that send, fire or redeliver queued. It ' +
        'changes nothing.',
      answer: { data: 'delivery' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/deliveries/{id}/redeliver',
    audit: { resource: 'delivery' },
    handler: 'redeliver',
    auth: ['tenant'],
    table: 'readWrite',
    sends: ['webhook'],
    payloads: 'read',
    summary: 'Queue a failed delivery again, with the same webhook-id',
    docs: {
      description:
        'Queues a failed delivery again for a new round of attempts, with the same body and the same `webhook-id`, ' +
        'so a receiver that deduplicates on it handles it once. Only a failed delivery can go again, with the ' +
        'channel enabled and its body not expired yet (409 otherwise); a second call while it is queued is 409 ' +
        'too.',
      answer: { data: 'delivery' },
      success: { 202: 'The delivery, queued again.' },
    },
  },
  {
    method: 'GET',
    path: '/tenants/settings',
    handler: 'get-client-settings',
    auth: ['client'],
    table: 'read',
    summary: "The client's events webhook (its URL and state, never the secret)",
    docs: {
      description:
        "The client's own webhook, where the integrator's events go (rollouts, failed applies and runs, missed " +
        "schedule slots, tenants' disabled alert channels: docs/events.md): the URL, whether it is enabled (and " +
        'why it was disabled), how many attempts it takes at once, the state of its endpoint and when its signing ' +
        'secret was made; never the secret itself. It changes nothing.',
      answer: { data: 'client-settings' },
    },
  },
  {
    method: 'PATCH',
    path: '/tenants/settings',
    audit: { resource: 'settings' },
    handler: 'update-client-settings',
    auth: ['client'],
    body: 'update-client-settings',
    table: 'readWrite',
    summary: "Set, change, pause, re-enable or remove the client's events webhook (its signing secret is shown once)",
    docs: {
      description:
        "Sets, changes or removes the client's events webhook, as PATCH /tenant/settings does a tenant's alert " +
        'channel, with the same rules: a URL set for the first time gets a signing secret, shown only in this ' +
        'answer; `enabled: false` turns it off (events meanwhile are not kept) and `true` back on (also after a ' +
        "receiver's 410 disabled it); `null` removes it and its secrets.",
      answer: { data: 'client-settings' },
    },
  },
  {
    method: 'POST',
    path: '/tenants/settings/webhook/secret',
    audit: { resource: 'settings' },
    handler: 'rotate-client-webhook-secret',
    auth: ['client'],
    table: 'readWrite',
    summary: 'A new events webhook signing secret (shown once); the previous one also signs for 24 hours',
    docs: {
      description:
        "Makes a new signing secret for the client's events webhook, shown only in this answer. For 24 hours events " +
        'carry a signature with the previous secret too, so the receiver can switch without losing one; older ' +
        'secrets stop signing at once. 409 `no_webhook` when no webhook is set.',
      answer: { data: 'client-settings' },
    },
  },
  {
    method: 'GET',
    path: '/tenants/deliveries',
    handler: 'list-event-deliveries',
    auth: ['client'],
    table: 'read',
    paginated: true,
    query: [deliveryStatusQuery],
    summary: "The client's event deliveries, newest first (kept 30 days)",
    docs: {
      description:
        "The deliveries of the integrator's events to the client's webhook, newest first, each with its event " +
        'type, status (`queued`, `retrying`, `delivered` or `failed`), attempts and next attempt; `status=failed` ' +
        'lists the ones to look at. They expire as tenant deliveries do (30 days by default). It changes nothing.',
      answer: { data: 'event-delivery', list: true },
    },
  },
  {
    method: 'GET',
    path: '/tenants/deliveries/{id}',
    handler: 'get-event-delivery',
    auth: ['client'],
    table: 'read',
    summary: 'An event delivery: status, attempts (time, status code or error), next attempt',
    docs: {
      description:
        "One delivery of an event to the client's webhook: its type, status, every attempt (when, and the " +
        "receiver's status code or the error), the next attempt and, once failed, why. It changes nothing.",
      answer: { data: 'event-delivery' },
    },
  },
  {
    method: 'POST',
    path: '/tenants/deliveries/{id}/redeliver',
    audit: { resource: 'delivery' },
    handler: 'redeliver-event',
    auth: ['client'],
    table: 'readWrite',
    sends: ['webhook'],
    summary: 'Queue a failed event delivery again, with the same webhook-id',
    docs: {
      description:
        'Queues a failed event delivery again for a new round of attempts, with the same body and the same ' +
        '`webhook-id`, so a receiver that deduplicates on it handles it once. Only a failed delivery can go again, ' +
        'with the webhook enabled and its body not expired yet (409 otherwise); a second call while it is queued ' +
        'is 409 too.',
      answer: { data: 'event-delivery' },
      success: { 202: 'The delivery, queued again.' },
    },
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
      description:
        'Issues a login token for a user of the tenant (spec 4.6): a signed JWT valid for one hour and reusable ' +
        'until then, and the ready URL, `https://{tenant_domain}/auth/api/<token>` (with `showMenu`, ' +
        '`showDesksIcon` and, from `route`, `ref`), that opens the BI signed in. Call it from your backend each ' +
        'time a signed-in user of yours opens the BI, then embed, redirect to or open the URL. Nothing is stored: ' +
        'each call issues another token, and earlier ones work until they expire or are revoked.',
      success: { 200: 'The login token and the URL that opens the BI signed in (spec 4.6).' },
      answer: { schema: 'login-answer' },
    },
  },
  {
    method: 'POST',
    path: '/tenant/login/revoke',
    audit: { resource: 'login' },
    handler: 'revoke-login',
    auth: ['tenant'],
    body: 'revoke-login',
    table: 'readWrite',
    summary: "End a user's sessions and void the login tokens issued to them",
    docs: {
      description:
        'Voids every login token issued to a user up to now and ends their open BI sessions; what is issued ' +
        'afterwards works. Call it when the user signs out of your application or loses access. Repeating it voids ' +
        'whatever was issued since.',
      success: { 200: 'Revoked.' },
      answer: { schema: 'revoke-login-answer' },
    },
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
      description:
        'The public keys (a JWK set, ES256, by `kid`) that verify login tokens. Fetch it if you check login tokens ' +
        'yourself; signing keys are rotated, so cache it no longer than the five minutes it allows. It changes ' +
        'nothing.',
      success: { 200: 'A JWK set (RFC 7517), cacheable for five minutes.' },
      answer: { schema: 'jwk-set', mediaType: 'application/jwk-set+json' },
    },
  },
  {
    method: 'GET',
    path: '/auth/api/{token}',
    audit: { unaudited: "a sign-in, not a change: the session it opens is the login token's, which POST /tenant/login issued" },
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
      description:
        "Where a login URL takes the user's browser: verifies the login token (signature, expiry, this tenant " +
        'domain, tenant active, user still linked, not revoked), opens a BI session (an 8-hour cookie that works ' +
        'in an iframe) and redirects to the `ref` route if it is a path on this site, else to `/`. A backend does ' +
        'not call it: the browser opens the `url` that POST /tenant/login answered. Each visit stores a new ' +
        'session; a refused token gets an HTML page that says why.',
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
      description:
        "The BI session of the browser's cookie: its user, tenant, UI flags (`showMenu`, `showDesksIcon` from the " +
        'login URL) and when it ends. The BI front end calls it on the tenant domain; a session that expired, was ' +
        'revoked, or whose user, login or tenant changed is 401. It changes nothing.',
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
    audit: {
      unaudited:
        "a liveness stamp (the agent's lastSeenAt, about twice a minute): it hands out the loads waiting, and changes none",
    },
    handler: 'agent-heartbeat',
    auth: ['agent'],
    table: 'readWrite',
    summary: 'Agent heartbeat: marks it online, returns the loads dispatched to it',
    docs: {
      description:
        "An agent's beat: marks it online for two minutes and answers the loads waiting for it (`runs`, oldest " +
        "first, as many as fit in one answer), the tenant's development_variables once for all of them, and when " +
        'to beat next (`nextHeartbeatInSeconds`, 48 to 72). The agent calls it in a loop; a run comes back in ' +
        "every answer until the agent reports on it (POST /agent/runs/{id}). It changes only the agent's last " +
        'heartbeat time.',
      answer: { data: 'heartbeat' },
    },
  },
  {
    method: 'POST',
    path: '/agent/runs/{id}',
    // Recorded in the agent's own chain (GET /tenant/audit?agent=), kept as long as the runs.
    audit: { resource: 'run' },
    handler: 'report-run',
    auth: ['agent'],
    body: 'report-run',
    table: 'readWrite',
    // A failed run is the integrator's `run.failed` event.
    sends: ['webhook'],
    summary: 'Agent reports a run running, succeeded or failed',
    docs: {
      description:
        'An agent reports on a run it took: `running`, then `succeeded` or `failed`, with an optional message. The ' +
        "first report takes the run off the agent's heartbeat answers; status and message show in GET " +
        "/tenant/runs. A failed run sends the integrator's `run.failed` event (docs/events.md). Another agent's run " +
        'is 404, and a finished run cannot change (409 `run_finished`).',
      answer: { data: 'run' },
    },
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

export type ConsumerConcurrencySetting = 'reloadConcurrency' | 'webhookConcurrency' | 'fireConcurrency' | 'rolloutConcurrency';

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
    // A tenant's channel it disables is the integrator's `webhook.endpoint_disabled` event, a delivery of its own.
    sends: ['webhook'],
    // The batch's deliveries go out in parallel, each with the 10-second receiver time-out.
    timeoutSeconds: 30,
    concurrencySetting: 'webhookConcurrency',
    summary: 'POSTs alert and integrator event webhooks (signed), retries on the schedule, dead-letters after the last attempt',
  },
  {
    queue: 'fire',
    handler: 'schedule-fire-worker',
    batchSize: 10,
    table: 'readWrite',
    // A slot that does not fire is the integrator's `schedule.missed` event.
    sends: ['reload', 'webhook'],
    // A batch is up to 100 schedules fired in parallel: about a second on AWS.
    timeoutSeconds: 20,
    concurrencySetting: 'fireConcurrency',
    reservesConcurrency: true,
    summary: 'Fires the schedules a tick found due: queues their flows, claims each slot once, moves each to its next fire',
  },
  {
    queue: 'rollout',
    handler: 'rollout-worker',
    // A message is a whole rollout, worked until the invocation's deadline.
    batchSize: 1,
    table: 'readWrite',
    sends: ['reload', 'webhook'],
    timeoutSeconds: 60,
    concurrencySetting: 'rolloutConcurrency',
    summary:
      "Rolls a template version out to its tenants in waves (each tenant applied once), queues their reloads and the client's events",
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
