/**
 * The read budget: every read route of the route table, at 1x and 100x data (bench/read-data.ts),
 * against the floor it can reach, measured in the same run. The floor is the token lookup, then
 * the same number of levels: `GET /whoami` (HTTP, the pipeline every route runs, the token
 * lookup), plus the route's own DynamoDB requests after the lookup, replayed level after level
 * (those of a level together) with nothing of ours around them. So the ratio measures what the
 * route adds to what it must do, whatever this machine's DynamoDB costs per request (DynamoDB
 * Local serves requests nearly one at a time; DynamoDB does not).
 */
import { Agent, request as httpRequest } from 'node:http';
import { routeKey, routes, type Route } from '#functions/routes.ts';
import type { Twin } from '#local/twin.ts';
import { type ApiCall, type ScaledTenant, scaledTenant } from './read-data.ts';
import { isTokenLookup, levelsOf, recordRequests, replay, type RequestLevels } from './request-replay.ts';
import { median } from './round-trips.ts';
import { fixed, markdownTable, measuredAt, ratio } from './table.ts';
import { callTwin } from './twin-api.ts';

/** A read route's p50 may be at most this many times its floor's. */
export const readFloorRatio = 1.3;
/** A read route's p50 may be at most this many times one round trip: its first level of requests, replayed. */
export const oneRoundTripRatio = 1.5;
/**
 * The read routes of two levels, each with why its second level must wait for its first (the code says so at
 * the read); every other read route is one level, the token lookup beside its reads. Ideally none: a route that
 * gets to one level leaves this list (test/integration/read-round-trips.test.ts checks both ways).
 */
export const twoLevels: Record<string, string> = {
  'GET /tenants/templates/{id}/tenants':
    "the page's tenant names and states are on the tenant items, keyed by the ids the fleet page lists; " +
    "the client's tenants index, the read that needs no ids, reads every tenant of the client (templates/fleet.ts)",
  'GET /tenant/users/{id}':
    "the user's groups and their records are keyed by group id, known from the user's memberships; every " +
    "group and every group's records, the reads that need no ids, grow with the tenant's groups (directory/directory.ts)",
};

/** Levels of requests a read route may take, the token lookup's included (it runs beside the first). */
const levelsAllowed = (key: string) => (Object.hasOwn(twoLevels, key) ? 2 : 1);
/** The scales of data measured: 1x and 100x a small tenant's. */
export const readScales = [1, 100] as const;

export interface ReadBudgetSettings {
  /** Requests per route and scale, each for the route and for its floor (in alternating blocks). */
  requests: number;
  /** Requests per route before any is measured: DynamoDB Local is a JVM, slow until its code is compiled. */
  warmup: number;
}

export interface ReadBudgetRow {
  route: string;
  scale: number;
  requests: number;
  /** Levels of requests, the token lookup's included. */
  depth: number;
  p50Ms: number;
  /** p50 of GET /whoami plus p50 of the route's requests after the token lookup, replayed. */
  floorMs: number;
  /** The one-round-trip floor: p50 of the route's first level (its first reads and the token lookup beside them), replayed. */
  oneRoundTripMs: number;
}

/** The routes that only read the table, with a bearer token. */
export const readRoutes = routes.filter((route) => route.method === 'GET' && route.table === 'read' && route.auth.length > 0);

/** The route's path with ids of the scaled tenant's records. */
export function readPath(route: Route, data: ScaledTenant): string {
  const ids = data.ids;
  const owner: Record<string, number> = {
    '/tenants/{id}': ids.tenant,
    '/tenants/templates/{id}': ids.template,
    '/tenant/users/{id}': ids.user,
    '/tenant/groups/{id}': ids.group,
    '/tenant/datamart/{id}': ids.datamart,
    '/tenant/schedules/{id}': ids.schedule,
    '/tenant/alerts/{id}': ids.alert,
    '/tenant/deliveries/{id}': ids.delivery,
    '/tenants/deliveries/{id}': ids.eventDelivery,
    '/tenant/runs/{id}': ids.run,
  };
  const prefix = Object.keys(owner)
    .filter((candidate) => route.path.startsWith(candidate))
    .sort((a, b) => b.length - a.length)[0];
  const withId = prefix ? `${prefix.replace('{id}', String(owner[prefix]))}${route.path.slice(prefix.length)}` : route.path;
  return withId
    .replace('{userId}', String(ids.user))
    .replace('{groupId}', String(ids.group))
    .replace('{rolloutId}', String(ids.rollout));
}

export const readToken = (route: Route, data: ScaledTenant) => (route.auth[0] === 'client' ? data.clientToken : data.tenantToken);

/** One connection, kept alive: requests one at a time, as a route's Lambda gets them. */
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

function get(url: URL, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const sent = httpRequest(url, { agent, headers: { authorization: `Bearer ${token}` } }, (response) => {
      response.on('data', () => undefined);
      response.on('end', () => {
        if ((response.statusCode ?? 500) >= 300) reject(new Error(`GET ${url.pathname}: ${response.statusCode}`));
        else resolve(performance.now() - started);
      });
    });
    sent.on('error', reject);
    sent.end();
  });
}

async function timed(operation: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await operation();
  return performance.now() - started;
}

/**
 * The route's p50 and its floor's (GET /whoami's, plus the replay of the route's levels after the
 * token lookup), in alternating blocks of requests so that whatever else the machine does
 * meanwhile weighs on all of them alike.
 */
async function routeAndFloor(
  route: { url: URL; token: string },
  whoami: { url: URL; token: string },
  levels: RequestLevels,
  requests: number,
) {
  const blocks = 10;
  const times = { route: [] as number[], whoami: [] as number[], after: [] as number[], first: [] as number[] };
  // The token lookup shares the first level with the route's first reads (parallel authentication).
  const withoutToken = levels
    .map((level) => level.filter((request) => !isTokenLookup(request)))
    .filter((level) => level.length > 0);
  // One round trip: the first level as the route sends it, the token lookup beside its first reads
  // (DynamoDB overlaps them; DynamoDB Local serves them nearly in turn, in the floor as in the route).
  const firstRoundTrip = levels.slice(0, 1);
  for (let block = 0; block < blocks; block++) {
    for (let index = 0; index < requests / blocks; index++) times.route.push(await get(route.url, route.token));
    for (let index = 0; index < requests / blocks; index++) times.whoami.push(await get(whoami.url, whoami.token));
    for (let index = 0; index < requests / blocks; index++) times.after.push(await timed(() => replay(withoutToken)));
    for (let index = 0; index < requests / blocks; index++) times.first.push(await timed(() => replay(firstRoundTrip)));
  }
  return {
    p50Ms: median(times.route),
    floorMs: median(times.whoami) + median(times.after),
    oneRoundTripMs: median(times.first),
  };
}

/** Measures every read route at 1x and 100x data on a twin started in this process; also returns the tenants it made. */
export async function measureReadBudget(
  twin: Pick<Twin, 'url' | 'clientToken'>,
  settings: ReadBudgetSettings,
  progress: (message: string) => void = () => undefined,
): Promise<{ rows: ReadBudgetRow[]; tenants: ScaledTenant[] }> {
  const call: ApiCall = (method, path, token, body) => callTwin(twin, method, path, token, body);
  const rows: ReadBudgetRow[] = [];
  const tenants: ScaledTenant[] = [];
  for (const scale of readScales) {
    progress(`  read budget: ${scale}x data...`);
    const data = await scaledTenant(call, twin.clientToken, scale);
    tenants.push(data);
    const urls = readRoutes.map((route) => ({
      route,
      url: new URL(readPath(route, data), twin.url),
      token: readToken(route, data),
    }));
    for (const { url, token } of urls) for (let index = 0; index < settings.warmup; index++) await get(url, token);
    const whoami = { url: new URL('/whoami', twin.url), token: data.tenantToken };
    for (const { route, url, token } of urls) {
      const recorded = await recordRequests(() => get(url, token));
      const levels = levelsOf(recorded);
      const { p50Ms, floorMs, oneRoundTripMs } = await routeAndFloor({ url, token }, whoami, levels, settings.requests);
      rows.push({
        route: routeKey(route),
        scale,
        requests: recorded.length,
        depth: levels.length,
        p50Ms,
        floorMs,
        oneRoundTripMs,
      });
    }
  }
  return { rows, tenants };
}

/** What the budget table says of each route: its rows at both scales side by side, and whether each check passes. */
function byRoute(rows: readonly ReadBudgetRow[]) {
  return readRoutes.map((route) => {
    const key = routeKey(route);
    const [small, large] = readScales.map((scale) => rows.find((row) => row.route === key && row.scale === scale));
    const flat = Boolean(small && large && small.requests === large.requests && small.depth === large.depth);
    const shallow = Boolean(small && large && Math.max(small.depth, large.depth) <= levelsAllowed(key));
    const fast = Boolean(small && large && [small, large].every((row) => row.p50Ms <= row.floorMs * readFloorRatio));
    // A route of two levels waits for two round trips: its budget is its floor's (the row below).
    const oneTrip =
      levelsAllowed(key) > 1 ||
      Boolean(small && large && [small, large].every((row) => row.p50Ms <= row.oneRoundTripMs * oneRoundTripRatio));
    return { key, small, large, flat, shallow, fast, oneTrip };
  });
}

/** The Budgets table's rows for the reads. */
export function readBudgetRows(rows: readonly ReadBudgetRow[]): Array<[string, boolean, string]> {
  const routesChecked = byRoute(rows);
  const failing = (check: 'flat' | 'shallow' | 'fast' | 'oneTrip') =>
    routesChecked
      .filter((route) => !route[check])
      .map((route) => route.key)
      .join(', ');
  return [
    [
      `reads vs the one-round-trip floor: every read route's p50 within ${oneRoundTripRatio}x of one round trip (its first reads and the token lookup beside them, replayed with nothing of ours around them), at 1x and 100x data; but the ${Object.keys(twoLevels).length} routes of two levels (${Object.keys(twoLevels).join(', ')}: their second reads' keys come from the first), held to their floor below`,
      routesChecked.every((route) => route.oneTrip),
      failing('oneTrip'),
    ],
    [
      `every read route's p50 within ${readFloorRatio}x of its floor (GET /whoami, then its own requests after the token lookup, level by level), at 1x and 100x data`,
      routesChecked.every((route) => route.fast),
      failing('fast'),
    ],
    [
      `every read route: one level of requests, the token lookup beside it (two for the ${Object.keys(twoLevels).length} routes named above), and as many requests in as many levels at 100x data as at 1x`,
      routesChecked.every((route) => route.flat && route.shallow),
      [failing('flat'), failing('shallow')].filter(Boolean).join('; '),
    ],
  ];
}

export const readBudgetHeading = '## Read routes against their floor';

/** The section of bench/results.md. */
export function readBudgetSection(rows: readonly ReadBudgetRow[], settings: ReadBudgetSettings): string {
  return [
    `${readBudgetHeading}\n\n${measuredAt()} Every GET route that reads the table with a bearer token, on a tenant with 1x and 100x a small tenant's data (bench/read-data.ts: 3 users, 2 groups, 2 datamarts, their permission records, a schedule, an alert... per unit). Requests and depth (levels of requests that waited for one another, the token lookup's included: it runs beside a read route's first reads) are counted on one request; then ${settings.requests} requests of the route (HTTP, one connection) and as many of its floor, in alternating blocks, after ${settings.warmup} warm-up requests per route. The floor is the token lookup, then the same number of levels: \`GET /whoami\` (HTTP, the pipeline every route runs, the token lookup), plus the route's own requests after the lookup replayed level by level (each level's together) with nothing of ours around them. So the ratio is what the route's own code adds; DynamoDB Local's cost per request, which is not DynamoDB's, is in the floor as much as in the route. The one-round-trip floor is the route's first level replayed (its first reads and the token lookup, sent together as parallel authentication sends them): what a read costs when authentication adds no round trip and nothing waits for a second level; the old floor stays for comparison. \`npm run bench -- reads\` measures this section alone and rewrites only it.`,
    markdownTable(
      [
        'route',
        'requests 1x',
        'depth 1x',
        'requests 100x',
        'depth 100x',
        'p50 1x',
        'floor 1x',
        'vs floor',
        'p50 100x',
        'floor 100x',
        'vs floor',
        'one trip 1x',
        'vs one trip',
        'one trip 100x',
        'vs one trip',
        'budget',
      ],
      byRoute(rows).map(({ key, small, large, flat, shallow, fast, oneTrip }) => [
        key,
        small?.requests ?? '',
        small?.depth ?? '',
        large?.requests ?? '',
        large?.depth ?? '',
        small ? fixed(small.p50Ms, 2) : '',
        small ? fixed(small.floorMs, 2) : '',
        small ? ratio(small.p50Ms, small.floorMs) : '',
        large ? fixed(large.p50Ms, 2) : '',
        large ? fixed(large.floorMs, 2) : '',
        large ? ratio(large.p50Ms, large.floorMs) : '',
        small ? fixed(small.oneRoundTripMs, 2) : '',
        small ? ratio(small.p50Ms, small.oneRoundTripMs) : '',
        large ? fixed(large.oneRoundTripMs, 2) : '',
        large ? ratio(large.p50Ms, large.oneRoundTripMs) : '',
        flat && shallow && fast && oneTrip ? 'pass' : '**FAIL**',
      ]),
    ),
  ].join('\n\n');
}
