/**
 * A typed TypeScript client of the BI tenant administration API: openapi-fetch over the types
 * openapi-typescript makes of docs/openapi.json (./schema.ts, generated: `npm run docs`). Every
 * path, parameter, body and answer is typed from the document, and each token kind's client has only
 * the routes that token may call; this file adds only what the document cannot say: the bearer
 * token, failures as a typed error, and walking paginated lists.
 */
import createClient, { type Client } from 'openapi-fetch';
import type { components, operationsByToken, paths } from './schema.js';

export type { components, operationsByToken, paths };

/** The error envelope every failure answers (`{status: 'error', success: false, message, code, errors, …}`). */
export type ErrorEnvelope = components['schemas']['error-envelope'];

/**
 * A body the client's events webhook receives (`PATCH /tenants/settings`): `{type, timestamp, data}`,
 * a union narrowed by `type` (`if (event.type === 'run.failed') event.data.runId`). Verify the
 * Standard Webhooks signature before trusting it; ignore a type you do not know.
 */
export type ClientEvent = components['schemas']['client-event'];

/** The event of one type: `ClientEventOf<'run.failed'>`. */
export type ClientEventOf<Type extends ClientEvent['type']> = Extract<ClientEvent, { type: Type }>;

/** A body a tenant's alert webhook receives (spec 6): `{alert, user, content, timestamp}`. */
export type AlertWebhook = components['schemas']['alert-webhook'];

/** A call that failed: its HTTP status and the error envelope, typed. */
export class ServiceError extends Error {
  constructor(
    readonly status: number,
    readonly envelope: ErrorEnvelope,
  ) {
    super(`${status} ${envelope.code}: ${envelope.message}`);
    this.name = 'ServiceError';
  }

  /** For programs: `validation_failed`, `tenant_not_found`, `tenant_inactive`, … */
  get code(): string {
    return this.envelope.code;
  }
}

export interface ClientOptions {
  /** Where the service answers, e.g. `https://api.example.com` or the twin's `http://localhost:3000`. */
  baseUrl: string;
  /** A fetch of your own (tests, proxies); the global one by default. */
  fetch?: typeof globalThis.fetch;
}

type HttpMethod = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch' | 'trace';

/** A kind of token: an integrator's client token, a tenant's token, an agent's token. */
export type TokenKind = keyof operationsByToken;

/**
 * The paths a token of `Kind` may call, each with only its allowed methods: any other method is
 * absent (`?: never`), so calling a route of another kind of token does not compile.
 */
export type PathsFor<Kind extends TokenKind> = {
  [Path in keyof operationsByToken[Kind] & keyof paths]: Omit<paths[Path], HttpMethod> &
    Pick<paths[Path], Extract<operationsByToken[Kind][Path], keyof paths[Path]>> & {
      [Method in Exclude<HttpMethod, operationsByToken[Kind][Path]>]?: never;
    };
};

/**
 * A client for a token of `Kind`: `IntegratorClient`, `TenantClient` or `AgentClient`. It reads JSON
 * answers: a route that can also answer YAML (a schedule file) is typed as its JSON answer, not as a
 * union to narrow.
 */
export type ServiceClient<Kind extends TokenKind> = Client<PathsFor<Kind>, 'application/json'>;
export type IntegratorClient = ServiceClient<'client'>;
export type TenantClient = ServiceClient<'tenant'>;
export type AgentClient = ServiceClient<'agent'>;

/** A client that sends `token` as its bearer token. */
function withToken<Kind extends TokenKind>(token: string, options: ClientOptions): ServiceClient<Kind> {
  const client = createClient<PathsFor<Kind>, 'application/json'>({
    baseUrl: options.baseUrl,
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  client.use({
    onRequest: ({ request }) => {
      request.headers.set('authorization', `Bearer ${token}`);
      return request;
    },
  });
  return client;
}

/** For the routes of the `clientBearerAuth` scheme: an integrator's client token (`cli_…`). */
export const integratorClient = (clientToken: string, options: ClientOptions): IntegratorClient =>
  withToken<'client'>(clientToken, options);

/** For the routes of the `tenantBearerAuth` scheme: a tenant's token (`ten_…`, from the creation or a rotation). */
export const tenantClient = (tenantToken: string, options: ClientOptions): TenantClient =>
  withToken<'tenant'>(tenantToken, options);

/** For the agent routes (`agentBearerAuth`): an agent's token (`agt_…`). */
export const agentClient = (agentToken: string, options: ClientOptions): AgentClient => withToken<'agent'>(agentToken, options);

/**
 * The answer of a call, or its failure thrown as a ServiceError:
 * `const { data } = await must(tenants.GET('/tenant'))`.
 */
export async function must<Data>(call: Promise<{ data?: Data; error?: unknown; response: Response }>): Promise<Data> {
  const { data, error, response } = await call;
  if (!response.ok || data === undefined) {
    throw new ServiceError(response.status, (error ?? { message: response.statusText, code: 'unknown' }) as ErrorEnvelope);
  }
  return data;
}

/** A fresh Idempotency-Key: send it with a creation, and the same one with its retries. */
export const newIdempotencyKey = () => crypto.randomUUID();

/**
 * Every item of a paginated list, page after page, following `nextCursor`:
 * `for await (const tenant of each((cursor) => must(client.GET('/tenants', { params: { query: { cursor } } }))))`.
 */
export async function* each<Item>(
  page: (cursor: string | undefined) => Promise<{ data: Item[]; nextCursor?: string | null }>,
): AsyncGenerator<Item> {
  let cursor: string | undefined;
  do {
    const answer = await page(cursor);
    yield* answer.data;
    cursor = answer.nextCursor ?? undefined;
  } while (cursor !== undefined);
}
