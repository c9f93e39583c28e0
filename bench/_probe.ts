import { startTwin } from '../local/twin.ts';
import { measureLatency } from './latency.ts';

const twin = await startTwin({ port: 0 });
try {
  const r = await fetch(`${twin.url}/tenants`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${twin.clientToken}` },
    body: '{"nome":"x","ativo":true}',
  });
  const tok = ((await r.json()) as any).data.token;
  for (let round = 0; round < 12; round++) {
    const res = await measureLatency(
      twin.url,
      { name: 'w', method: 'GET', path: '/whoami', headers: { authorization: `Bearer ${tok}` } },
      { requests: 500, connections: 10, warmupRequests: 0 },
    );
    console.log('whoami batch', round, res.p50Ms.toFixed(2), res.p99Ms.toFixed(2), res.requestsPerSecond.toFixed(0), res.non2xx);
  }
  const h = await measureLatency(
    twin.url,
    { name: 'h', method: 'GET', path: '/health', headers: {} },
    { requests: 2000, connections: 10, warmupRequests: 200 },
  );
  console.log('health', h.p50Ms.toFixed(2), h.p99Ms.toFixed(2), h.requestsPerSecond.toFixed(0), h.non2xx);
} finally {
  await twin.stop();
}
