/**
 * Alert deliveries: how fast queued webhooks reach a receiver on loopback, through the real queue,
 * the deliverer behind the twin's poller, and the safe sender.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Twin } from '#local/twin.ts';
import { twinData } from './twin-api.ts';

export interface DeliveryResult {
  deliveries: number;
  queueMs: number;
  totalMs: number;
  perSecond: number;
}

/** Queues `count` fires of one alert at once and times them until the receiver has them all. */
export async function measureDeliveries(twin: Pick<Twin, 'url' | 'clientToken'>, count = 50): Promise<DeliveryResult> {
  let received = 0;
  let allReceived: () => void = () => undefined;
  const done = new Promise<void>((resolve) => {
    allReceived = resolve;
  });
  const receiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.end('ok');
      if (++received === count) allReceived();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = receiver.address() as AddressInfo;
    const tenant = await twinData(twin, 'POST', '/tenants', twin.clientToken, { nome: 'Bench alerts', ativo: true });
    const token = tenant.token as string;
    await twinData(twin, 'PATCH', '/tenant/settings', token, {
      alertChannels: { webhook: { url: `http://127.0.0.1:${port}/hook` } },
    });
    const alert = await twinData(twin, 'POST', '/tenant/alerts', token, {
      nome: 'Bench',
      channels: { webhook: true },
      content: [{ type: 'text', nome: 'Intro', generated: { text: 'Hello' } }],
    });
    const started = performance.now();
    await Promise.all(
      Array.from({ length: count }, (_, index) =>
        twinData(twin, 'POST', `/tenant/alerts/${alert.id}/fire`, token, { user: { id: index + 1 } }),
      ),
    );
    const queueMs = performance.now() - started;
    await done;
    const totalMs = performance.now() - started;
    return { deliveries: count, queueMs, totalMs, perSecond: (count / totalMs) * 1000 };
  } finally {
    receiver.closeAllConnections();
    receiver.close();
  }
}
