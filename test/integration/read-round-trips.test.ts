/**
 * Every read route's DynamoDB requests, counted against DynamoDB Local at 1x and 100x data
 * (bench/read-data.ts), each route invoked in this process as the gateway invokes it: one level of
 * requests, the token lookup beside the route's reads (parallel authentication: principals.ts
 * `authenticateInParallel`), but for the routes `twoLevels` names, whose second level waits for
 * keys only the first finds; and as many requests (in as many levels) at 100x as at 1x. `npm run
 * bench` reports the counts, depths and latencies.
 */
import { beforeAll, describe, expect, test } from 'vitest';
import { routeKey } from '#functions/routes.ts';
import { readPath, readRoutes, readScales, readToken, twoLevels } from '#bench/read-budget.ts';
import { countingRoundTrips, type Sample } from '#bench/round-trips.ts';
import { type ApiCall, type ScaledTenant, scaledTenant } from '#bench/read-data.ts';
import { newClient } from '#test/support/api.ts';
import { callRoute } from '#test/support/in-process.ts';

const call: ApiCall = async (method, path, token, body) => {
  const answer = await callRoute({ method, path, token, body });
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
  return answer.body;
};

async function measureAll(data: ScaledTenant): Promise<Map<string, Sample>> {
  return countingRoundTrips(async (measure) => {
    const samples = new Map<string, Sample>();
    for (const route of readRoutes) {
      let status = 0;
      const sample = await measure(async () => {
        status = (await callRoute({ method: 'GET', path: readPath(route, data), token: readToken(route, data) })).status;
      });
      expect(status, routeKey(route)).toBe(200);
      samples.set(routeKey(route), sample);
    }
    return samples;
  });
}

test('every route of two levels is a read route', () => {
  expect(Object.keys(twoLevels).filter((key) => !readRoutes.some((route) => routeKey(route) === key))).toEqual([]);
});

describe('every read route: one level, the token lookup beside its reads (but twoLevels), and as many requests at 100x data as at 1x', () => {
  const measured = new Map<number, Map<string, Sample>>();
  beforeAll(async () => {
    for (const scale of readScales) {
      const client = await newClient();
      measured.set(scale, await measureAll(await scaledTenant(call, client.token, scale)));
    }
  }, 300_000);

  test.each(readRoutes.map(routeKey))('%s', (key) => {
    const [small, large] = readScales.map((scale) => measured.get(scale)?.get(key));
    if (!small || !large) throw new Error(`${key} was not measured`);
    // The token lookup runs beside the route's first reads (parallel authentication): it adds no level.
    const reason = Object.hasOwn(twoLevels, key) ? twoLevels[key] : undefined;
    expect(small.depth, reason ?? 'one level, the token lookup beside the reads').toBe(reason ? 2 : 1);
    expect({ requests: large.roundTrips, depth: large.depth }, 'at 100x data').toEqual({
      requests: small.roundTrips,
      depth: small.depth,
    });
  });
});
