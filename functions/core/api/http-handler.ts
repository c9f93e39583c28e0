import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import type { RouteFacts } from '#functions/routes.ts';
import { type AuditRequest, auditScopeFor, recordAlone } from '#functions/core/audit/audit-record.ts';
import { withAuditScope } from '#functions/core/audit/audit-scope.ts';
import { authenticate, authenticateInParallel, type Principal, principalScope } from '#functions/core/auth/principals.ts';
import { canonicalJson } from '#functions/core/canonical-json.ts';
import { apiConfig } from '#functions/core/config.ts';
import { badRequest, errorBody, internalErrorBody, ServiceError } from '#functions/core/errors.ts';
import type { Page } from '#functions/core/store/dynamo.ts';
import { fitsOneResult, megabytes, mostThatFit, resultBytes } from './answer-fit.ts';
import { type Attempt, withIdempotency } from './idempotency.ts';
import { runUntilKilled } from './middy-options.ts';
import { routeFacts } from './route-facts.generated.ts';
import { unmatchedRouteKey } from './route-matching.ts';
import { viewerAddressOf } from '#functions/core/edge/viewer-address.ts';
import { logger } from '#functions/core/observability/logger.ts';
import { count, metrics } from '#functions/core/observability/metrics.ts';
import { parseBody, type YamlParser } from './request-body.ts';
import { gatewayRequestIdOf, requestIdOf } from './request-id.ts';
import { type SchemaModule, validateBody } from './validation.ts';

/** The route an invocation serves: its key (`METHOD /path`) and its row's run-time facts. */
export interface ServedRoute extends RouteFacts {
  key: string;
}

export interface ApiRequest<Body = unknown> {
  route: ServedRoute;
  method: string;
  /** The path as sent (a tenant route's ids are in pathParameters). */
  path: string;
  principal: Principal;
  body: Body;
  pathParameters: Record<string, string | undefined>;
  /** The declared query parameters: read them with queryParameter, integerQueryParameter or pageParameters. */
  query: Record<string, string | undefined>;
  headers: Record<string, string | undefined>;
  cookies: string[];
  /** The host the request was sent to, without a port (a tenant domain, for the SSO routes). */
  host: string;
  /**
   * The request id (request-id.ts): the caller's `X-Request-Id` when valid, else API Gateway's. The
   * answer echoes it and every log line of the request has it; what the request creates keeps it
   * (deliveries, runs). A label to find things by, never unique: nothing that must be is made of it.
   */
  requestId: string;
  /** Epoch milliseconds when this invocation's function times out: locks it takes last until then, no longer. */
  deadline: number;
  /**
   * This request's record, for the operation it runs (an idempotent route with an Idempotency-Key
   * keeps one: its answer and checkpoints commit in the operation's transactions); a no-op otherwise.
   */
  idempotency: Attempt;
}

/** JSON unless the handler sets a content-type and gives the body as text (the SSO landing's HTML). */
export interface ApiResponse {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
  cookies?: string[];
  /**
   * An answer that hands out a variable number of items (a page, a heartbeat's runs), which the
   * pipeline cuts to what fits in one Lambda result: `body(count)` is the answer with only the first
   * `count` of its `items`, the rest being the next call's (its `nextCursor` resumes after them, or
   * they stay pending for the next beat).
   */
  shortenable?: { items: number; body: (count: number) => unknown };
}

type Event = APIGatewayProxyEventV2;
type Result = APIGatewayProxyStructuredResultV2;

/** Set by the authentication middleware before the handler runs. */
interface ApiContext extends Context {
  route?: ServedRoute;
  principal?: Principal;
  startedAt?: number;
  /** The stamp of the token's use, running beside the handler (principals.ts `authenticate`), awaited before the answer. */
  tokenUse?: Promise<void>;
  /**
   * A read-only route's token lookup, running beside the handler, which reads as the token's signed
   * owner (`principal`, provisional until this holds): awaited before the answer, its failure winning.
   */
  confirmation?: Promise<Principal>;
}

// A function missing its configuration fails here, at cold start, not on some later request.
apiConfig();

function toResult(response: ApiResponse, requestId: string): Result {
  const text = typeof response.body === 'string' && response.headers?.['content-type'] !== undefined;
  return {
    statusCode: response.status,
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'cache-control': 'no-store',
      ...response.headers,
      // Last: no handler's header replaces the request id.
      'x-request-id': requestId,
    },
    body: text ? (response.body as string) : JSON.stringify(response.body),
    ...(response.cookies?.length ? { cookies: response.cookies } : {}),
  };
}

/**
 * The result, measured as Lambda measures it (every answer, once, here): over what one Lambda result
 * carries, a shortenable answer keeps the most items that fit; anything else, or one item alone too
 * large, is a 400 `answer_too_large` in the envelope, never API Gateway's bare 500. Data written under
 * the quotas never gets there (test/integration/answer-bounds.test.ts).
 */
function fittedResult(response: ApiResponse, requestId: string, routeKey: string): Result {
  const result = toResult(response, requestId);
  if (fitsOneResult(result)) return result;
  const { shortenable } = response;
  if (shortenable) {
    const shortened = (count: number) => toResult({ ...response, body: shortenable.body(count) }, requestId);
    const kept = mostThatFit(shortenable.items, (count) => fitsOneResult(shortened(count)));
    if (kept > 0) {
      logger.info('Answer cut to what fits in one Lambda result', { routeKey, items: shortenable.items, kept });
      count('AnswersCut');
      return shortened(kept);
    }
  }
  const bytes = resultBytes(result);
  logger.error('Answer larger than one Lambda result', { routeKey, bytes });
  throw badRequest(
    `The answer (${megabytes(bytes)}${shortenable ? ', and its first item alone' : ''}) is larger than one answer can carry ` +
      '(6 MB): it holds more than the quotas allow (data written before them)',
    [],
    'answer_too_large',
  );
}

/**
 * A page of a paginated list: `{status, data, nextCursor}`, cut by the pipeline to what fits in one
 * answer, `nextCursor` then resuming after the last item it keeps.
 */
export function pageResponse<T>(page: Page<T>): ApiResponse {
  const body = (count: number) => ({ status: 'success', data: page.items.slice(0, count), nextCursor: page.cursorAfter(count) });
  return { status: 200, body: body(page.items.length), shortenable: { items: page.items.length, body } };
}

/**
 * The stamp of the token's use, which runs beside the handler, finished before the answer leaves (it
 * never fails), so that Lambda does not freeze it half-way.
 */
const settleTokenUse = async (request: { context: ApiContext }) => {
  await request.context.tokenUse;
};

/** Finds the route row this invocation serves, then resolves the bearer token for its schemes (and may start its use's stamp). */
const authentication = (): MiddlewareObj<Event, Result, Error, ApiContext> => ({
  after: settleTokenUse,
  onError: settleTokenUse,
  before: async (request) => {
    request.context.tokenUse = undefined;
    const key = request.event.routeKey;
    const facts = Object.hasOwn(routeFacts, key) ? routeFacts[key] : undefined;
    if (!facts) throw new Error(`No route in the route table for ${key}`);
    const route: ServedRoute = { key, ...facts };
    request.context.route = route;
    request.context.confirmation = undefined;
    const keepAlive = (work: Promise<void>) => {
      request.context.tokenUse = work;
    };
    const authorization = request.event.headers.authorization;
    if (route.readsOnly) {
      const { provisional, confirmed } = await authenticateInParallel(authorization, route.auth, keepAlive);
      // Settled even when the handler fails first: its failure is then the answer's only if this holds.
      confirmed.catch(() => undefined);
      request.context.principal = provisional ?? (await confirmed);
      if (provisional) request.context.confirmation = confirmed;
    } else {
      request.context.principal = await authenticate(authorization, route.auth, keepAlive);
    }
    const principal = request.context.principal;
    if (principal.kind !== 'anonymous') logger.appendKeys({ clientId: principal.clientId });
    if (principal.kind === 'tenant' || principal.kind === 'agent') logger.appendKeys({ tenantId: principal.tenantId });
  },
});

/**
 * The request id in every log line of the request, from its first (a temporary key: injectLambdaContext's
 * resetKeys drops it with the invocation). Then one log line per request (route, status, duration, the
 * caller's address, the tenant ids the authentication added, and API Gateway's own request id: what its
 * access log keeps, so that line finds this one whichever id the request used), and the Requests and
 * Errors metrics. Runs after the error mapping, so it sees the status the caller gets.
 */
const accessLog = (): MiddlewareObj<Event, Result, Error, ApiContext> => {
  const record = async (request: { event: Event; context: ApiContext; response: Result | null | undefined }) => {
    const status = request.response?.statusCode ?? 500;
    count('Requests');
    if (status >= 500) count('Errors');
    logger.info('Request handled', {
      routeKey: request.event.routeKey,
      status,
      viewerAddress: viewerAddressOf(request.event),
      gatewayRequestId: gatewayRequestIdOf(request.event),
      durationMs: Math.round(performance.now() - (request.context.startedAt ?? performance.now())),
    });
  };
  return {
    before: async (request) => {
      request.context.startedAt = performance.now();
      logger.appendKeys({ requestId: requestIdOf(request.event) });
    },
    after: record,
    onError: record,
  };
};

/** Domain errors become the error envelope with their status; anything else a generic 500, logged. */
const errorResponses = (): MiddlewareObj<Event, Result, Error, ApiContext> => ({
  onError: async (request) => {
    const requestId = requestIdOf(request.event);
    const error = request.error;
    if (error instanceof ServiceError) {
      request.response = toResult(
        { status: error.status, body: errorBody(error.code, error.message, requestId, error.errors), headers: error.headers },
        requestId,
      );
      return;
    }
    logger.error('Unhandled error', { requestId, error: error ?? undefined });
    request.response = toResult({ status: 500, body: internalErrorBody(requestId) }, requestId);
  },
});

/** A query parameter the route does not declare is a mistake the caller should hear of (a misspelled filter, say), not ignored. */
function refuseUndeclaredQuery(route: ServedRoute, sent: Record<string, string | undefined>): void {
  const declared = new Set((route.query ?? []).map(({ name }) => name));
  const undeclared = Object.keys(sent).filter((name) => !declared.has(name));
  const [first] = undeclared;
  if (first === undefined) return;
  const takes = declared.size > 0 ? `it takes ${[...declared].join(', ')}` : 'it takes none';
  throw badRequest(
    `Unknown query parameter ${JSON.stringify(first)}${undeclared.length > 1 ? ` (and ${undeclared.length - 1} more)` : ''}: ${takes}`,
    undeclared.map((name) => ({ location: 'query', pointer: `/${name}`, message: 'is not a parameter of this route' })),
    'unknown_query_parameter',
  );
}

/** Only the query parameters the route's row declares: a handler cannot read one the table does not state. */
const declaredQuery = (route: ServedRoute, sent: Record<string, string | undefined>) =>
  Object.fromEntries((route.query ?? []).map(({ name }) => [name, sent[name]]));

/**
 * Wraps a route's implementation: logging context, authentication per the route table, body
 * parsing and schema validation, Idempotency-Key handling, and the mapping of errors to HTTP.
 * A route with a body schema passes that schema's generated module as `options.body` (so its
 * bundle carries only that validator; the route table's name is checked against it). Routes that
 * take YAML (`yaml: true` in the table) pass `parseYamlBody` as `options.yaml`. A handler whose
 * body has rules beyond its schema may take the parsed body unchecked (`validatedByHandler`) to
 * report the schema's errors and its own in one answer. The implementation's `request.body` has
 * the type generated with the module (`unknown` when unchecked, `undefined` without a module), so
 * a handler names no body type of its own.
 */
export function httpHandler<Body = undefined, Unchecked extends boolean = false>(
  implementation: (request: ApiRequest<Unchecked extends true ? unknown : NoInfer<Body>>) => Promise<ApiResponse>,
  options: { body?: SchemaModule<Body>; yaml?: YamlParser; validatedByHandler?: Unchecked } = {},
) {
  type Received = Unchecked extends true ? unknown : Body;
  return middy<Event, Result, Error, ApiContext>(runUntilKilled)
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics))
    .use(accessLog())
    .use(errorResponses())
    .use(authentication())
    .handler(async (event, context) => {
      const respond = async (): Promise<Result> => {
        const requestId = requestIdOf(event);
        const { route, principal } = context;
        if (!route || !principal) throw new Error('The authentication middleware did not run');
        if (Boolean(route.yaml) !== Boolean(options.yaml)) {
          throw new Error(`${event.routeKey}: the route table and the handler disagree on whether it takes YAML`);
        }
        if (route.body !== options.body?.schemaName) {
          throw new Error(
            `${event.routeKey}: the route table's body schema is ${route.body}, the handler's ${options.body?.schemaName}`,
          );
        }
        if (route.key !== unmatchedRouteKey) refuseUndeclaredQuery(route, event.queryStringParameters ?? {});
        const body = route.body ? parseBody(event, { yaml: options.yaml }) : undefined;
        const parsed = options.body && route.body && !options.validatedByHandler ? validateBody<Body>(options.body, body) : body;
        const deadline = Date.now() + context.getRemainingTimeInMillis();
        const run = (idempotency: Attempt) => {
          const work = () =>
            implementation({
              route,
              method: event.requestContext.http.method,
              path: event.rawPath,
              principal,
              body: parsed as Received,
              pathParameters: event.pathParameters ?? {},
              query: declaredQuery(route, event.queryStringParameters ?? {}),
              headers: event.headers,
              cookies: event.cookies ?? [],
              host: (event.headers.host ?? event.requestContext?.domainName ?? '').replace(/:\d+$/, '').toLowerCase(),
              requestId,
              deadline,
              idempotency,
            });
          const audit = auditRequestOf(
            route,
            principal,
            event,
            body,
            route.idempotent && call.key !== undefined ? idempotency.requestKey : undefined,
          );
          if (!audit) return work();
          const scope = auditScopeFor(audit);
          return withAuditScope(scope, async () => {
            const response = await work();
            // A change that is a queued message: recorded alone once sent (a retry with the same key records it once).
            if (response.status < 300 && route.audit && 'queuedChange' in route.audit) await recordAlone();
            return response;
          });
        };
        const call = {
          scope: `${principalScope(principal)}:${event.routeKey}`,
          // Only the routes whose row says so honour the header; the others ignore it.
          key: route.idempotent ? event.headers['idempotency-key'] : undefined,
          // The request as the operation sees it: which resource (the path: one alert's send is not
          // another's) and what was asked (the body as parsed, keys sorted: a retry that serialises
          // its JSON in another order, or sends it as YAML, is the same request).
          request: `${event.routeKey}\n${event.rawPath}\n${canonicalJson(body)}`,
          deadline,
          gatewayRequestId: gatewayRequestIdOf(event),
        };
        return fittedResult(await withIdempotency(call, run), requestId, event.routeKey);
      };
      if (!context.confirmation) return respond();
      // Parallel authentication: the route ran as the token's signed owner; nothing it found, an answer
      // or an error, leaves before the token's lookup holds (a revoked token gets its 401, never the data).
      const settled = respond().then(
        (result) => ({ result }),
        (error: unknown) => ({ error }),
      );
      await context.confirmation;
      const outcome = await settled;
      if ('error' in outcome) throw outcome.error;
      return outcome.result;
    });
}

/**
 * The audit record a request of a writing route owes (audit/audit-record.ts), from its row's `audit`
 * fact: undefined for a route that records none, or an anonymous caller. A client's change to a
 * tenant (its creation, its deletion, anything under `/tenants/{id}`) joins that tenant's chain; its
 * other changes, its own chain. A tenant's changes join its chain; an agent's (its run reports), the
 * agent's own, kept as long as the runs.
 */
function auditRequestOf(
  route: ServedRoute,
  principal: Principal,
  event: Event,
  body: unknown,
  requestKey: string | undefined,
): AuditRequest | undefined {
  const fact = route.audit;
  if (!fact || !('resource' in fact) || principal.kind === 'anonymous') return undefined;
  const parameters = event.pathParameters ?? {};
  const idParameter = fact.idParameter ?? (parameters.id === undefined ? false : 'id');
  const fromBody =
    fact.bodyId && typeof body === 'object' && body !== null ? (body as Record<string, unknown>)[fact.bodyId] : undefined;
  const id = idParameter === false ? (fromBody === undefined ? undefined : String(fromBody)) : parameters[idParameter];
  const { clientId } = principal;
  const tenantChain = (tenantId: number) => ({ owner: 'tenant' as const, ownerId: tenantId, clientId });
  const clientChain = { owner: 'client' as const, ownerId: clientId, clientId };
  const chain: AuditRequest['chain'] =
    principal.kind === 'agent'
      ? { owner: 'agent', ownerId: principal.agentId, tenantId: principal.tenantId, clientId }
      : principal.kind === 'tenant'
        ? tenantChain(principal.tenantId)
        : fact.resource !== 'tenant'
          ? clientChain
          : (allocated) => {
              const tenantId = id === undefined ? allocated('tenant') : Number(id);
              return tenantId === undefined ? clientChain : tenantChain(tenantId);
            };
  return {
    chain,
    actor: principal,
    action: route.key,
    resource: { type: fact.resource, ...(id === undefined ? {} : { id }) },
    path: event.rawPath,
    fields: typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.keys(body).sort() : [],
    requestId: requestIdOf(event),
    viewerAddress: viewerAddressOf(event),
    ...(requestKey === undefined ? {} : { requestKey }),
  };
}

/** A path parameter that must be a positive integer id; anything else is a 400. */
export function idParameter(request: ApiRequest<unknown>, name: string): number {
  const raw = request.pathParameters[name] ?? '';
  const id = /^[1-9][0-9]{0,15}$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(id)) {
    throw badRequest(
      `Path parameter ${name} must be a positive integer`,
      [{ location: 'path', pointer: `/${name}`, message: 'must be a positive integer' }],
      'invalid_path_parameter',
    );
  }
  return id;
}

/** `limit` and `cursor` of a paginated list; on a route whose row is not `paginated`, an error (a 500). */
export function pageParameters(request: ApiRequest<unknown>): { limit: number; cursor: string | undefined } {
  return { limit: integerQueryParameter(request, 'limit'), cursor: queryParameter(request, 'cursor') };
}

/**
 * `limit` and `cursor` of a list answered whole unless `limit` is sent (the spec's lists that show
 * no paging, whose rows declare wholeListQuery): `limit` is undefined when absent.
 */
export function wholeListParameters(request: ApiRequest<unknown>): { limit: number | undefined; cursor: string | undefined } {
  const limit = queryParameter(request, 'limit') === undefined ? undefined : integerQueryParameter(request, 'limit');
  return { limit, cursor: queryParameter(request, 'cursor') };
}

/**
 * A query parameter the route's row declares, as sent (undefined when absent). One the row does not
 * declare is an error (a 500), so the table cannot leave out a parameter a handler reads.
 */
export function queryParameter(request: ApiRequest<unknown>, name: string): string | undefined {
  if (!(request.route.query ?? []).some((parameter) => parameter.name === name)) {
    throw new Error(`${request.route.key}: the route table declares no query parameter ${name}`);
  }
  return request.query[name];
}

/**
 * An integer query parameter the route's row declares: its default when absent, a 400 when not an
 * integer within its range. One the row does not declare is an error (a 500), so the table cannot
 * leave out a parameter a handler reads.
 */
export function integerQueryParameter(request: ApiRequest<unknown>, name: string): number {
  const { schema } = (request.route.query ?? []).find((parameter) => parameter.name === name) ?? {};
  if (!schema || !('type' in schema) || schema.type !== 'integer') {
    throw new Error(`${request.route.key}: the route table declares no integer query parameter ${name}`);
  }
  const raw = request.query[name];
  // Without a default, absent is out of range: such a parameter is read only when sent (wholeListParameters).
  const value =
    raw === undefined ? (schema.default ?? Number.NaN) : /^(?:0|[1-9][0-9]{0,5})$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= schema.minimum && value <= schema.maximum)) {
    const rule = `must be an integer from ${schema.minimum} to ${schema.maximum}`;
    throw invalidQueryParameter(name, rule);
  }
  return value;
}

/** The 400 of a query parameter that breaks `rule` ("must be …"), naming it. */
export const invalidQueryParameter = (name: string, rule: string) =>
  badRequest(
    `Query parameter ${name} ${rule}`,
    [{ location: 'query', pointer: `/${name}`, message: rule }],
    'invalid_query_parameter',
  );

/** An integer query parameter without a default (an id to filter by): undefined when absent, else as integerQueryParameter. */
export const optionalIntegerQueryParameter = (request: ApiRequest<unknown>, name: string): number | undefined =>
  queryParameter(request, name) === undefined ? undefined : integerQueryParameter(request, name);

/**
 * A query parameter of a few allowed values, as the route's row declares them: undefined when absent,
 * a 400 naming the values when it is another.
 */
export function enumQueryParameter<Value extends string>(request: ApiRequest<unknown>, name: string): Value | undefined {
  const { schema } = (request.route.query ?? []).find((parameter) => parameter.name === name) ?? {};
  if (!schema || !('enum' in schema))
    throw new Error(`${request.route.key}: the route table declares no enum query parameter ${name}`);
  const raw = request.query[name];
  if (raw === undefined || schema.enum.includes(raw)) return raw as Value | undefined;
  const rule = `must be one of ${schema.enum.join(', ')}`;
  throw invalidQueryParameter(name, rule);
}

/**
 * A text query parameter the route's row declares (an exact filter: a login, a name): undefined when
 * absent, a 400 when shorter or longer (in characters) than the row says.
 */
export function textQueryParameter(request: ApiRequest<unknown>, name: string): string | undefined {
  const { schema } = (request.route.query ?? []).find((parameter) => parameter.name === name) ?? {};
  if (!schema || !('type' in schema) || schema.type !== 'string') {
    throw new Error(`${request.route.key}: the route table declares no string query parameter ${name}`);
  }
  const raw = request.query[name];
  if (raw === undefined) return undefined;
  const { minLength = 0, maxLength = Number.POSITIVE_INFINITY } = schema;
  const length = [...raw].length;
  if (length >= minLength && length <= maxLength) return raw;
  const rule = `must be ${minLength} to ${maxLength} characters long`;
  throw invalidQueryParameter(name, rule);
}

/** A boolean query parameter the route's row declares: undefined when absent, a 400 unless `true` or `false`. */
export function booleanQueryParameter(request: ApiRequest<unknown>, name: string): boolean | undefined {
  const { schema } = (request.route.query ?? []).find((parameter) => parameter.name === name) ?? {};
  if (!schema || !('type' in schema) || schema.type !== 'boolean') {
    throw new Error(`${request.route.key}: the route table declares no boolean query parameter ${name}`);
  }
  const raw = request.query[name];
  if (raw === undefined) return undefined;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  const rule = 'must be true or false';
  throw invalidQueryParameter(name, rule);
}

/** The If-Match header, on a route whose row says it honours it; on any other route, an error (a 500). */
export function ifMatchHeader(request: ApiRequest<unknown>): string | undefined {
  if (!request.route.ifMatch) throw new Error(`${request.route.key}: the route table does not say it honours If-Match`);
  return request.headers['if-match'];
}
