import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

export interface LatencyCase {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface LatencySettings {
  requests: number;
  connections: number;
  warmupRequests: number;
}

export interface LatencyResult {
  name: string;
  method: string;
  path: string;
  requests: number;
  non2xx: number;
  /** Connection errors and time-outs: requests that got no answer at all. */
  errors: number;
  statusCodes: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  requestsPerSecond: number;
}

/**
 * Warms the route up (the first requests pay for module loading, JIT and connection set-up), then
 * measures exactly `settings.requests` requests.
 */
export async function measureLatency(baseUrl: string, testCase: LatencyCase, settings: LatencySettings): Promise<LatencyResult> {
  await warmUp(baseUrl, testCase, settings.warmupRequests, settings.connections);
  const run = await fire(baseUrl, testCase, settings.requests, settings.connections);
  const { result, latenciesMs, elapsedMs } = run;
  const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats).map(([code, { count }]) => [code, count]));
  return {
    name: testCase.name,
    method: testCase.method,
    path: testCase.path,
    requests: latenciesMs.length,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    statusCodes,
    p50Ms: percentile(latenciesMs, 50),
    p99Ms: percentile(latenciesMs, 99),
    requestsPerSecond: latenciesMs.length / (elapsedMs / 1000),
  };
}

/** Sends `requests` requests and forgets the answers. */
export async function warmUp(baseUrl: string, testCase: LatencyCase, requests: number, connections: number): Promise<void> {
  if (requests > 0) await fire(baseUrl, testCase, requests, connections);
}

/**
 * One autocannon run. Its own histogram keeps whole milliseconds, too coarse for a local route
 * answering in a few ms, so the exact (hrtime) latency of every response is collected instead.
 * Its duration is also no use for requests/s: a run ends on the next sampling tick after the last
 * response, so the time to the last response is measured here.
 */
async function fire(baseUrl: string, testCase: LatencyCase, amount: number, connections: number) {
  const latenciesMs: number[] = [];
  const started = performance.now();
  let lastResponse = started;
  const instance = autocannon({
    url: new URL(testCase.path, baseUrl).href,
    method: testCase.method,
    headers: testCase.headers,
    body: testCase.body,
    amount,
    connections,
    // Sampling every 1 s (the default) leaves the run idle for up to a second after its last response.
    sampleInt: 50,
  });
  instance.on('response', (_client, _status, _bytes, responseTimeMs) => {
    latenciesMs.push(responseTimeMs);
    lastResponse = performance.now();
  });
  const result = await instance;
  return { result, latenciesMs, elapsedMs: lastResponse - started };
}

/** Nearest-rank percentile. */
function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? Number.NaN;
}
