/**
 * The OpenAPI 3.1 description of this API, built from the route table and the JSON Schemas alone:
 * every fact about a route is on its row (what only this description needs under `docs`), every
 * shape in schemas/. Build-time code, never bundled into a function: `npm run docs`
 * (bin/generate-openapi.ts) writes the result to docs/openapi.json, which GET /openapi.json serves.
 */
import { maxWebhookBodyBytes } from '#functions/core/alerts/deliveries.ts';
import { responseTimeoutMs, userAgents } from '#functions/core/alerts/deliverer.ts';
import { defaultRetryDelaysSeconds } from '#functions/core/alerts/webhook-config.ts';
import { idempotencyKeyPattern, idempotencyRetentionHours } from '#functions/core/api/idempotency.ts';
import { maxBodyBytes } from '#functions/core/api/request-body.ts';
import { callerRequestIdPattern, maxCallerRequestIdLength } from '#functions/core/api/request-id.ts';
import { docsAssets } from '#functions/http/docs-asset.ts';
import { schemeNames } from '#functions/core/auth/principals.ts';
import {
  type HttpMethod,
  pageQuery,
  pageSize,
  type QueryParameter,
  type Route,
  type RouteAnswer,
  type RouteDocs,
  routeKey,
} from '#functions/routes.ts';
import { errorBody, type FieldError, maxEchoedLength, maxListedErrors } from '#functions/core/errors.ts';
import { type ErrorCode, errorCodes } from '#functions/core/error-codes.ts';
import recordedAnswers from './answer-examples.json' with { type: 'json' };

type Schema = Record<string, unknown>;
type Json = Record<string, unknown>;

export interface OpenApiSources {
  routes: readonly Route[];
  /** Request-body schemas and the schemas they refer to, by `$id` (schemas/index.ts). */
  requestSchemas: Readonly<Record<string, Schema>>;
  /** Answer shapes (schemas/responses/), by `$id`. */
  responseSchemas: Readonly<Record<string, Schema>>;
  /** An example body for every request schema, and for the webhook payload. */
  examples: Readonly<Record<string, unknown>>;
  /** One body of each type of the integrator's events (schemas/client-event.schema.json), by type. */
  eventExamples: Readonly<Record<string, unknown>>;
  /** The error codes each route can answer (tools/openapi/error-codes.ts). */
  errorCodes: ReadonlyMap<Route, readonly ErrorCode[]>;
  version: string;
}

const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const responseRef = (name: string) => ({ $ref: `#/components/responses/${name}` });
const parameterRef = (name: string) => ({ $ref: `#/components/parameters/${name}` });
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

/**
 * A success answer, with the `X-Request-Id` it carries. Errors carry it too, but say so once, in the envelope's
 * `requestId` (the same value): a header on each of the ~600 error answers would add some 50 KB to the document.
 */
const withRequestId = ({ description, headers, ...rest }: Json): Json => ({
  description,
  headers: { ...(headers as Json | undefined), 'X-Request-Id': headerRef('RequestId') },
  ...rest,
});

/** A public route's own credential: the session cookie is a security scheme; a token in the path is none OpenAPI has. */
const credentialSecurity: Record<NonNullable<RouteDocs['credential']>['in'], Json[]> = {
  cookie: [{ sessionCookieAuth: [] }],
  path: [],
};

/** The generic envelope with a known `data`. */
/** The envelope around a route's record: `data` is always there; `nextCursor` on a page of a paginated list. */
const envelopeOf = (data: Schema): Schema => ({
  allOf: [schemaRef('success-envelope'), { type: 'object', required: ['data'], properties: { data } }],
});

/** Media type → schema of a success answer. */
function answerContent(answer: RouteAnswer | undefined): Record<string, Schema> {
  if (!answer) return { 'application/json': schemaRef('success-envelope') };
  if ('data' in answer) {
    const record = schemaRef(answer.data);
    return {
      'application/json': envelopeOf(answer.list ? { type: 'array', items: record } : record),
      ...(answer.yaml ? { 'application/yaml': record } : {}),
      ...(answer.ndjson ? { 'application/x-ndjson': { type: 'string', description: 'One record per line.' } } : {}),
    };
  }
  if ('schema' in answer) return { [answer.mediaType ?? 'application/json']: schemaRef(answer.schema) };
  if ('text' in answer) return Object.fromEntries(answer.text.map((type) => [type, { type: 'string' }]));
  return {};
}

const stringHeaders = (headers: Readonly<Record<string, string>>) =>
  Object.fromEntries(Object.entries(headers).map(([name, description]) => [name, { description, schema: { type: 'string' } }]));

const kebabWords = (text: string) => text.split(/[^A-Za-z0-9]+/).filter(Boolean);
const camelCase = (words: string[]) =>
  words.map((word, index) => (index === 0 ? word.toLowerCase() : word[0]?.toUpperCase() + word.slice(1).toLowerCase())).join('');

/** `5 s`, `30 min`, `2 h`: a delay as the description states it. */
const duration = (seconds: number) =>
  seconds % 3600 === 0 ? `${seconds / 3600} h` : seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`;
/** `a, b and c`. */
const inWords = (items: readonly string[]) => `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;

/**
 * `createTenant` from the handler `create-tenant`; a handler that serves several routes adds the
 * method (`deleteTenantPost`). Two routes of one handler and one method would share an id: each
 * behaviour has a handler of its own (docs/architecture.md), so that is refused.
 */
export function operationIds(routes: readonly Route[]): Map<Route, string> {
  const ids = new Map<Route, string>();
  for (const route of routes) {
    const siblings = routes.filter((other) => other.handler === route.handler);
    const words = kebabWords(route.handler);
    if (siblings.length > 1) words.push(route.method);
    const id = camelCase(words);
    if ([...ids.values()].includes(id))
      throw new Error(`Two routes would share the operation id ${id}: give each a handler of its own`);
    ids.set(route, id);
  }
  return ids;
}

/** Groups routes by area: the first path segment, or the first two when several routes share them. */
export function tagOf(route: Pick<Route, 'path'>, routes: readonly Pick<Route, 'path'>[]): string {
  const [first = '', second] = route.path.split('/').slice(1);
  const aliases: Record<string, string> = { '.well-known': 'auth', 'openapi.json': 'docs' };
  if (second && !second.startsWith('{')) {
    const prefix = `/${first}/${second}`;
    const sharing = routes.filter((other) => other.path === prefix || other.path.startsWith(`${prefix}/`));
    if (sharing.length > 1) return `${first}/${second}`;
  }
  return aliases[first] ?? first;
}

const queryParameter = ({ name, description, schema }: QueryParameter): Json => ({ name, in: 'query', description, schema });

const pathParameterNames = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
/** `{id}`, `{userId}`, `{groupId}`: positive integers (idParameter); a malformed one is a 400. */
const isIdParameter = (name: string) => name === 'id' || name.endsWith('Id');

function pathParameter(name: string): Json {
  if (name === 'token') {
    return { name, in: 'path', required: true, description: 'A login token (JWT).', schema: { type: 'string' } };
  }
  if (name === 'asset') {
    return {
      name,
      in: 'path',
      required: true,
      description: 'One of the listed files.',
      schema: { enum: Object.keys(docsAssets) },
    };
  }
  if (!isIdParameter(name)) throw new Error(`No description of the path parameter {${name}}`);
  return {
    name,
    in: 'path',
    required: true,
    description: 'A positive integer id.',
    schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
  };
}

const unescapeToken = (token: string) => token.replaceAll('~1', '/').replaceAll('~0', '~');

/**
 * The schemas as components, `$id` and `$schema` dropped (the document is their base, and 3.1's
 * default dialect is a superset of 2020-12). Each `$defs` entry some `$ref` points at becomes a
 * component of its own (`alert-webhook#/$defs/user` → `alert-webhook.user`), so every reference is
 * `#/components/schemas/<name>`; vendor keys (`x-…`) stay, as OpenAPI allows them.
 */
export function schemaComponents(schemas: Readonly<Record<string, Schema>>): Record<string, Schema> {
  const targetOf = (ref: string, hostId: string): { id: string; path: string[]; name: string } => {
    const [base = '', fragment = ''] = ref.split('#');
    const id = base || hostId;
    if (!schemas[id]) throw new Error(`${hostId}: $ref ${ref} names no known schema`);
    const tokens = fragment.split('/').slice(1).map(unescapeToken);
    if (fragment !== '' && (tokens[0] !== '$defs' || tokens.length < 2)) {
      throw new Error(`${hostId}: $ref ${ref} is neither a whole schema nor one of its $defs`);
    }
    return { id, path: tokens.slice(1), name: [id, ...tokens.slice(1)].join('.') };
  };
  const referenced = new Set<string>();
  const collect = (value: unknown, hostId: string): void => {
    if (typeof value !== 'object' || value === null) return;
    for (const [key, child] of Object.entries(value)) {
      if (key === '$ref' && typeof child === 'string') referenced.add(targetOf(child, hostId).name);
      else collect(child, hostId);
    }
  };
  for (const [id, schema] of Object.entries(schemas)) collect(schema, id);

  const rewrite = (value: unknown, hostId: string): unknown => {
    if (Array.isArray(value)) return value.map((child) => rewrite(child, hostId));
    if (typeof value !== 'object' || value === null) return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, child]) =>
        key === '$ref' && typeof child === 'string'
          ? [key, `#/components/schemas/${targetOf(child, hostId).name}`]
          : [key, rewrite(child, hostId)],
      ),
    );
  };
  const components: Record<string, Schema> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    if (schema.$id !== id) throw new Error(`Schema ${id} has $id ${String(schema.$id)}`);
    const { $id: _id, $schema: _dialect, $defs, ...root } = schema;
    components[id] = rewrite(root, id) as Schema;
    // Referenced entries become components; unreferenced ones (containers such as `typeIs`) are walked into.
    const hoist = (definitions: unknown, path: string[]): void => {
      if (typeof definitions !== 'object' || definitions === null) return;
      for (const [name, definition] of Object.entries(definitions)) {
        const componentName = [id, ...path, name].join('.');
        if (referenced.has(componentName)) components[componentName] = rewrite(definition, id) as Schema;
        else hoist(definition, [...path, name]);
      }
    };
    hoist($defs, []);
  }
  for (const name of referenced) if (!components[name]) throw new Error(`$ref target ${name} is not in its schema`);
  return withDiscriminatorMappings(components);
}

/**
 * Each tagged union (`discriminator` beside a `oneOf` of references) given its `mapping`: every value
 * of the tag, to the branch that takes it (its `const` or `enum`). JSON Schema validators such as ajv
 * refuse a mapping, so the schemas state only the tag's name; generators read the mapping to type
 * each branch by its tag's values (several values may share a branch: `Hour` and `Minute`).
 */
function withDiscriminatorMappings(components: Record<string, Schema>): Record<string, Schema> {
  const mapped = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(mapped);
    if (typeof value !== 'object' || value === null) return value;
    const node = Object.fromEntries(Object.entries(value).map(([key, child]) => [key, mapped(child)])) as Schema;
    const discriminator = node.discriminator as { propertyName: string } | undefined;
    if (!discriminator) return node;
    const mapping: Record<string, string> = {};
    for (const branch of (node.oneOf ?? []) as { $ref?: string }[]) {
      const target = components[branch.$ref?.split('/').at(-1) ?? ''];
      const tag = (target?.properties as Record<string, { const?: string; enum?: string[] }> | undefined)?.[
        discriminator.propertyName
      ];
      const values = tag?.const !== undefined ? [tag.const] : (tag?.enum ?? []);
      if (!branch.$ref || values.length === 0) {
        throw new Error(
          `Every branch of a tagged union is a reference whose ${discriminator.propertyName} is a const or an enum`,
        );
      }
      for (const tagValue of values) mapping[tagValue] = branch.$ref;
    }
    return { ...node, discriminator: { ...discriminator, mapping } };
  };
  return Object.fromEntries(Object.entries(components).map(([name, schema]) => [name, mapped(schema) as Schema]));
}

const errorExample = (code: ErrorCode, message: string, errors: FieldError[] = []) =>
  errorBody(code, message, '5f0c6a53-9b7e-4b1d-8f1e-2c4a8d2e7b10', errors);

/** What each error status means, whichever code says why. */
const statusDescriptions: Readonly<Record<number, string>> = {
  400: 'Invalid: every failing field, by JSON pointer.',
  401: 'No valid credentials.',
  403: 'A valid token of another kind than the route takes.',
  404: 'Not there, or not the caller’s.',
  405: 'The path takes other methods.',
  409: 'Conflicts with the current state.',
  412: '`If-Match` names another version than the current one.',
  413: 'Over the size limit.',
  415: 'Not a media type the route takes.',
  500: 'Something failed on our side.',
  503: 'Not available yet.',
};
/** Headers some codes send with the envelope. */
const codeHeaders: Partial<Record<ErrorCode, Json>> = {
  unauthorized: { 'WWW-Authenticate': { description: 'The scheme to authenticate with.', schema: { type: 'string' } } },
  apply_in_progress: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'string' } } },
  idempotency_key_in_progress: {
    'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'string' } },
  },
};
/** Examples as the routes really answer them; a code without one shows its meaning as the message. */
const exampleAnswers: Partial<Record<ErrorCode, Json>> = {
  validation_failed: errorExample('validation_failed', 'Invalid request body: /nome must NOT have fewer than 1 characters', [
    { location: 'body', pointer: '/nome', message: 'must NOT have fewer than 1 characters' },
  ]),
  unauthorized: errorExample('unauthorized', 'Missing bearer token'),
  wrong_token_kind: errorExample(
    'wrong_token_kind',
    'This route takes a tenant token (tenantBearerAuth); this is a client token',
  ),
  tenant_not_found: errorExample('tenant_not_found', 'Tenant not found'),
  payload_too_large: errorExample('payload_too_large', 'Request body is larger than 1000000 bytes'),
  internal_error: errorExample('internal_error', 'Internal server error'),
};
const exampleOf = (code: ErrorCode) => exampleAnswers[code] ?? errorExample(code, errorCodes[code].meaning.replaceAll('`', ''));

/** The error envelope whose `code` is one of a status's codes for this route. */
const errorSchema = (codes: readonly ErrorCode[]): Schema => ({
  allOf: [schemaRef('error-envelope'), { type: 'object', properties: { code: { enum: codes } } }],
});
const codeList = (codes: readonly ErrorCode[]) => codes.map((code) => `- \`${code}\`: ${errorCodes[code].meaning}`).join('\n');

/** What every bearer scheme says of the token's form (functions/core/auth/tokens.ts). */
const tokenFormatNote =
  'Opaque to callers: send it as given, `Authorization: Bearer <token>`. It is signed (`keyId`, the signing key; ' +
  '`random`, 32 random bytes and `mac`, an HMAC-SHA256 of the rest, in base64url), so a forged one is refused with 401 ' +
  'before any lookup. Tokens issued before tokens were signed (`<prefix>_` and 43 characters) are accepted while the ' +
  'service accepts unsigned tokens.';

/** The code a status's example shows: a field error when there can be one, else the route's most particular code (the catalog lists the generic ones first). */
const exampleCode = (codes: readonly ErrorCode[]) =>
  codes.includes('validation_failed') ? 'validation_failed' : (codes.at(-1) as ErrorCode);

function errorResponse(status: number, codes: readonly ErrorCode[]): Json {
  const headers = Object.assign({}, ...codes.map((code) => codeHeaders[code] ?? {})) as Json;
  return {
    description: `${statusDescriptions[status] ?? 'Refused.'}\n\n${codeList(codes)}`,
    ...(Object.keys(headers).length > 0 ? { headers } : {}),
    content: { 'application/json': { schema: errorSchema(codes), example: exampleOf(exampleCode(codes)) } },
  };
}

function errorCodesOf(route: Route, sources: OpenApiSources): readonly ErrorCode[] {
  const codes = sources.errorCodes.get(route);
  if (!codes) throw new Error(`No error codes for ${route.method} ${route.path}`);
  return codes;
}

function components(sources: OpenApiSources): Json {
  const schemas: Json = {
    'success-envelope': {
      type: 'object',
      description: 'The answer of most routes. Some answer exactly the shape the spec gives them instead (`{success: true, …}`).',
      required: ['status', 'data'],
      properties: {
        status: { const: 'success' },
        data: { description: 'What the route answers.' },
        nextCursor: {
          type: ['string', 'null'],
          description: 'Paginated lists: the `cursor` of the next page; null on the last one.',
        },
      },
    },
    'error-envelope': {
      type: 'object',
      description: 'Every error, whatever the status.',
      required: ['status', 'success', 'message', 'code', 'errors', 'errorCount', 'requestId'],
      properties: {
        status: { const: 'error' },
        success: { const: false },
        message: {
          type: 'string',
          maxLength: maxEchoedLength,
          description: 'For people: what went wrong, with the first failing field.',
        },
        code: { type: 'string', description: 'For programs: `validation_failed`, `tenant_not_found`, `tenant_inactive`, …' },
        errors: {
          type: 'array',
          maxItems: maxListedErrors,
          items: schemaRef('field-error'),
          description: `The failing inputs (400), the first ${maxListedErrors} of them; \`errorCount\` says how many there were.`,
        },
        errorCount: { type: 'integer', minimum: 0, description: 'How many failing inputs there were, listed or not.' },
        requestId: {
          type: 'string',
          description:
            "The request in the service logs, as the answer's `X-Request-Id` header names it: the caller's valid " +
            "`X-Request-Id`, else the service's own id.",
        },
      },
    },
    'field-error': {
      type: 'object',
      required: ['location', 'pointer', 'message'],
      properties: {
        location: { enum: ['body', 'path', 'query', 'header'] },
        pointer: {
          type: 'string',
          maxLength: maxEchoedLength,
          description: `JSON pointer (RFC 6901) inside the location; empty for the whole body. One longer than ${maxEchoedLength} characters is cut, ending with …`,
        },
        message: { type: 'string', maxLength: maxEchoedLength },
      },
    },
  };
  Object.assign(schemas, schemaComponents({ ...sources.requestSchemas, ...sources.responseSchemas }));
  return {
    schemas,
    responses: {
      TooManyRequests: {
        description:
          'Throttled before any function runs: by the WAF at the edge (a caller over its limit: the error envelope, code ' +
          "`too_many_requests`, an empty `requestId` and `Retry-After`), or by API Gateway (a route's bucket: its own " +
          'body, `{"message":"Too Many Requests"}`).',
        headers: {
          'Retry-After': { description: 'From the edge: seconds to wait before retrying.', schema: { type: 'string' } },
        },
        content: {
          'application/json': {
            schema: {
              anyOf: [
                errorSchema(['too_many_requests']),
                { type: 'object', required: ['message'], properties: { message: { type: 'string' } } },
              ],
            },
            example: exampleOf('too_many_requests'),
          },
        },
      },
    },
    parameters: {
      IdempotencyKey: {
        name: 'Idempotency-Key',
        in: 'header',
        required: false,
        description:
          `Makes the request safe to retry: within ${idempotencyRetentionHours} hours the same key answers the first answer again, ` +
          "also after a crash of the service (the answer is stored with the request's last write, and a request that " +
          'stopped half-way is resumed); with another request it is refused (409), and while the first attempt still runs ' +
          'a retry gets 409 with `Retry-After`. Send a fresh UUID per request and the same one with its retries.',
        schema: { type: 'string', pattern: idempotencyKeyPattern.source },
      },
      RequestId: {
        name: 'X-Request-Id',
        in: 'header',
        required: false,
        description:
          `The request's id, when it is 1 to ${maxCallerRequestIdLength} visible ASCII characters (no space): the answer ` +
          "echoes it in `X-Request-Id` and the error envelope's `requestId`, the service's logs of the request have it, " +
          'and the deliveries and runs the request makes keep it (`requestId`). Any other value, or none, is replaced by ' +
          "the service's own id, never refused. A label to find a request by: it need not be unique, and nothing relies on it being so.",
        schema: { type: 'string', pattern: callerRequestIdPattern.source },
      },
      ...Object.fromEntries(pageQuery.map((parameter) => [parameter.name, queryParameter(parameter)])),
    },
    headers: {
      RequestId: {
        description:
          "The request's id: the caller's `X-Request-Id` when valid, else the service's own; the same as the error " +
          "envelope's `requestId`. The answers no function of the service gives (API Gateway's own, the edge firewall's) lack it.",
        schema: { type: 'string' },
      },
    },
    securitySchemes: {
      clientBearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: `A client (integrator) token, \`cli_<keyId>.<clientId>.<random>.<mac>\` (\`npm run admin -- client create\`). ${tokenFormatNote}`,
      },
      tenantBearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: `A tenant token, \`ten_<keyId>.<clientId>-<tenantId>.<random>.<mac>\` (\`POST /tenants\`, \`POST /tenants/{id}/token\`). ${tokenFormatNote}`,
      },
      agentBearerAuth: {
        type: 'http',
        scheme: 'bearer',
        description: `An agent token, \`agt_<keyId>.<clientId>-<tenantId>-<agentId>.<random>.<mac>\` (\`POST /tenant/agents\`, \`POST /tenant/agents/{id}/token\`). ${tokenFormatNote}`,
      },
      sessionCookieAuth: {
        type: 'apiKey',
        in: 'cookie',
        name: '__Host-bi_session',
        description: 'The BI session the SSO landing opens, on the tenant domain.',
      },
    },
  };
}

function requestBody(route: Route, sources: OpenApiSources): Json | undefined {
  if (!route.body) return undefined;
  const example = sources.examples[route.body];
  if (example === undefined) throw new Error(`No example for the request schema ${route.body}`);
  // Inline, not one components/examples entry: Redocly 2.77 misvalidates an example that several operations share.
  const media = { schema: schemaRef(route.body), example };
  // JSON is YAML too: the YAML media type shows the same example.
  const content: Json = { 'application/json': media, ...(route.yaml ? { 'application/yaml': media } : {}) };
  // A body the route lets callers leave out (`bodyOptional`): typed clients then make it optional too.
  return { required: !route.bodyOptional, content };
}

/** What the tests really received, scrubbed (`npm run examples:record`): each 2xx JSON answer's example, by route and status. */
const answerExamples: Readonly<Record<string, Readonly<Record<string, unknown>>>> = recordedAnswers;

function responses(route: Route, sources: OpenApiSources): Json {
  const { docs } = route;
  const result: Json = {};
  const content = answerContent(docs.answer);
  for (const [status, description] of Object.entries(docs.success ?? { 200: 'Success.' })) {
    const example = answerExamples[routeKey(route)]?.[status] as { data?: unknown } | undefined;
    // A YAML answer is the JSON answer's record; an example is a value, whichever media type spells it.
    const examples: Record<string, unknown> = { 'application/json': example, 'application/yaml': example?.data };
    const media = (type: string, schema: Schema) => ({
      schema,
      ...(examples[type] !== undefined ? { example: examples[type] } : {}),
    });
    result[status] = withRequestId({
      description,
      ...(docs.headers ? { headers: stringHeaders(docs.headers) } : {}),
      ...(Object.keys(content).length > 0
        ? { content: Object.fromEntries(Object.entries(content).map(([type, schema]) => [type, media(type, schema)])) }
        : {}),
    });
  }
  if (docs.notModified) result['304'] = withRequestId({ description: docs.notModified });
  const codes = errorCodesOf(route, sources);
  const statuses = [
    ...new Set([...codes.map((code) => errorCodes[code].status), ...Object.keys(docs.htmlErrors ?? {}).map(Number)]),
  ];
  for (const status of statuses.sort((x, y) => x - y)) {
    const listed = codes.filter((code) => errorCodes[code].status === status);
    const page = docs.htmlErrors?.[status];
    const html = { 'text/html': { schema: { type: 'string' } } };
    if (page && listed.length === 0) result[status] = { description: page, content: html };
    else if (page) {
      // A browser's route answers its own refusals as a page; what the pipeline refuses first is still the envelope.
      result[status] = {
        description: `${page} Refused before the route runs: the error envelope.\n\n${codeList(listed)}`,
        content: { ...html, 'application/json': { schema: errorSchema(listed) } },
      };
    } else result[status] = errorResponse(status, listed);
  }
  // API Gateway's own, before any function runs (status keys list in numeric order whatever the insertion order).
  result['429'] = responseRef('TooManyRequests');
  return result;
}

/** The row's own description, then (a paragraph of their own) the notes its other facts give. */
function description(route: Route): string {
  const notes: string[] = [];
  if (route.docs.credential) notes.push(route.docs.credential.note);
  if (route.auth.length > 1) notes.push(`Takes a ${route.auth.join(' or a ')} token.`);
  if (route.yaml) notes.push('The body may be JSON or YAML (`Content-Type: application/yaml`).');
  if (route.body) notes.push(`Bodies up to ${maxBodyBytes.toLocaleString('en-US')} bytes (\`payload_too_large\`, 413, beyond).`);
  if (route.idempotent) notes.push(`Honours an \`Idempotency-Key\` header for ${idempotencyRetentionHours} hours.`);
  if (route.ifMatch) notes.push('`If-Match` (the ETag of the version read) refuses to overwrite a newer version (412).');
  if (route.paginated) notes.push('Paginated: `limit` and `cursor`, and `nextCursor` in the answer.');
  return notes.length > 0 ? `${route.docs.description}\n\n${notes.join(' ')}` : route.docs.description;
}

function operation(route: Route, operationId: string, routes: readonly Route[], sources: OpenApiSources): Json {
  const { credential } = route.docs;
  const security = credential ? credentialSecurity[credential.in] : route.auth.map((scheme) => ({ [schemeNames[scheme]]: [] }));
  const parameters: Json[] = [
    ...pathParameterNames(route.path).map(pathParameter),
    ...(route.paginated ? pageQuery.map((parameter) => parameterRef(parameter.name)) : []),
    ...(route.query ?? []).map(queryParameter),
    ...(route.idempotent ? [parameterRef('IdempotencyKey')] : []),
    ...(route.ifMatch
      ? [{ name: 'If-Match', in: 'header', description: 'The ETag of the version read.', schema: { type: 'string' } }]
      : []),
    parameterRef('RequestId'),
  ];
  const body = requestBody(route, sources);
  return {
    tags: [tagOf(route, routes)],
    summary: route.summary,
    description: description(route),
    operationId,
    security,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: responses(route, sources),
  };
}

const webhookHeader = (name: string, description: string, schema: Json = { type: 'string' }) => ({
  name,
  in: 'header',
  required: true,
  description,
  schema,
});

/** What a receiver answers, and what the deliverer does with it: the same for every webhook. */
const webhookResponses = (owner: string) => ({
  200: { description: 'Any 2xx: delivered.' },
  410: { description: `Gone: the delivery fails at once and the ${owner}'s channel is disabled until re-enabled.` },
  default: {
    description:
      'Anything else (3xx, 4xx, 5xx, no answer): retried; a `Retry-After` longer than the next delay is honoured, up to 12 hours.',
  },
});

/** How a receiver checks a delivery, and how it is sent again: the same for every webhook, with the routes that set its secret. */
const signedDelivery = (secretRoutes: string) =>
  'Signed with the Standard Webhooks scheme: verify `webhook-signature` over `<webhook-id>.<webhook-timestamp>.<body>` ' +
  `with the signing secret ${secretRoutes} showed (during a rotation, one signature per secret). The ` +
  `receiver has ${responseTimeoutMs / 1000} seconds to answer. Retried at ${inWords(defaultRetryDelaysSeconds.map(duration))}; ` +
  `dedupe on \`webhook-id\`.`;

const signedHeaders = (userAgent: string) => [
  webhookHeader('webhook-id', 'The delivery: the same on every attempt and redelivery.'),
  webhookHeader('webhook-timestamp', "The attempt's Unix time, in seconds.", { type: 'string', pattern: '^[0-9]+$' }),
  webhookHeader('webhook-signature', 'Space-separated `v1,<base64 HMAC-SHA256>` signatures.'),
  webhookHeader('User-Agent', userAgent, { const: userAgent }),
];

/**
 * One webhook per type of the integrator's events, named by the type, its body the schema's branch
 * for it (`client-event.<camelCase type>`), so a generated client has a type per event.
 */
function eventWebhooks(sources: OpenApiSources): Json {
  const schema = sources.requestSchemas['client-event'] as {
    $defs: Record<string, { description: string; properties: { type: { const: string } } }>;
  };
  const branches = Object.entries(schema.$defs).filter(([, definition]) => definition.properties?.type?.const !== undefined);
  return Object.fromEntries(
    branches.map(([name, definition]) => {
      const type = definition.properties.type.const;
      const example = sources.eventExamples[type];
      if (example === undefined) throw new Error(`No example for the event ${type}`);
      return [
        type,
        {
          post: {
            tags: [tagOf({ path: '/tenants/settings' }, sources.routes)],
            summary: `\`${type}\`: ${definition.description}`,
            description:
              `An integrator's event, POSTed to the client's webhook URL (docs/events.md): \`{type, timestamp, data}\`. ` +
              signedDelivery('`PATCH /tenants/settings` or `POST /tenants/settings/webhook/secret`'),
            operationId: `${camelCase(kebabWords(type))}Event`,
            security: [],
            parameters: signedHeaders(userAgents.client),
            requestBody: {
              required: true,
              content: { 'application/json': { schema: schemaRef(`client-event.${name}`), example } },
            },
            responses: webhookResponses('client'),
          },
        },
      ];
    }),
  );
}

function webhooks(sources: OpenApiSources): Json {
  const example = sources.examples['alert-webhook'];
  if (example === undefined) throw new Error('No example for the webhook payload');
  return {
    alert: {
      post: {
        tags: [tagOf({ path: '/tenant/alerts' }, sources.routes)],
        summary: "An alert, POSTed to the tenant's webhook URL when it fires or is force-sent (spec 6)",
        description:
          signedDelivery('`PATCH /tenant/settings` or `POST /tenant/settings/webhook/secret`') +
          ` At most ${maxWebhookBodyBytes / (1024 * 1024)} MB.`,
        operationId: 'alertWebhook',
        security: [],
        parameters: signedHeaders(userAgents.tenant),
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: schemaRef('alert-webhook'),
              example,
            },
          },
        },
        responses: webhookResponses('tenant'),
      },
    },
    ...eventWebhooks(sources),
  };
}

export function openApiDocument(sources: OpenApiSources): Json {
  const ids = operationIds(sources.routes);
  const paths: Record<string, Record<string, Json>> = {};
  const tags: string[] = [];
  for (const route of sources.routes) {
    const tag = tagOf(route, sources.routes);
    if (!tags.includes(tag)) tags.push(tag);
    paths[route.path] ??= {};
    (paths[route.path] as Record<string, Json>)[route.method.toLowerCase() as Lowercase<HttpMethod>] = operation(
      route,
      ids.get(route) as string,
      sources.routes,
      sources,
    );
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'BI tenant administration API',
      version: sources.version,
      summary: 'Integrators create tenants; tenant backends manage them.',
      description: [
        'Generated from the route table (`functions/routes.ts`) and the JSON Schemas (`schemas/`) by `npm run docs`.',
        '',
        'Bodies are JSON (schedules and templates also YAML). Most answers are `{status: "success", data}`; the routes',
        'the spec defines answer its own shapes (`{success: true, …}`). Every error is the error envelope: 400 lists',
        'every failing field by JSON pointer (a query parameter the route does not declare too), 401 sends',
        '`WWW-Authenticate`, 500 carries a `requestId` to find in the logs. A path no route has is 404; a path that',
        'other methods take is 405 with `Allow` naming them; both in the error envelope. Every answer names its request',
        "in `X-Request-Id`: the caller's own `X-Request-Id` when it sent a valid one, else the service's id.",
        '',
        'Every list takes `limit` and `cursor`, save the effective permissions of a user on a datamart (computed whole).',
        `A paged list answers ${pageSize.default} items unless \`limit\` asks for another number (at most ${pageSize.maximum}); the`,
        'lists the spec shows whole (datamarts and their permission records, users, templates), and the groups and agents,',
        'stay whole unless `limit` is sent. A page carries `nextCursor` beside `data`: send it back as `cursor` for the next',
        'page. It is null exactly on the last page, also one that is exactly full.',
        '',
        'Three bearer token kinds: client (integrator), tenant and agent. Each route names the kinds it takes: another',
        'kind of valid token is 403 naming the scheme the route needs, and the token of a deleted tenant is 404',
        '`Tenant not found` on every tenant route.',
      ].join('\n'),
    },
    servers: [{ url: '/', description: 'The service that serves this document' }],
    tags: tags.map((name) => ({ name, description: tagDescription(name, sources.routes) })),
    paths,
    webhooks: webhooks(sources),
    components: components(sources),
  };
}

function tagDescription(tag: string, routes: readonly Route[]): string {
  const tagged = routes.filter((route) => tagOf(route, routes) === tag);
  const kinds = [...new Set(tagged.flatMap((route) => route.auth))];
  const who = kinds.length > 0 ? `${kinds.join(' or ')} token` : 'public';
  const prefixes = [
    ...new Set(
      tagged.map((route) =>
        route.path
          .split('/')
          .slice(0, tag.includes('/') ? 3 : 2)
          .join('/'),
      ),
    ),
  ];
  return `${prefixes.map((prefix) => `\`${prefix}\``).join(', ')} (${who})`;
}
