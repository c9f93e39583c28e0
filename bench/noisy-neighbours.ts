/**
 * Noisy neighbours on the twin: a quiet tenant's webhook deliveries, alone and beside a tenant whose
 * receiver never answers, and quiet tenants' schedule fires, alone and beside a tenant with 10,000
 * schedules due in the same minute. Needs a twin without its clock, running the webhook and fire
 * consumers, with the production retry and breaker settings.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dispatchDueSchedules } from '#functions/core/schedules/dispatcher.ts';
import { type ScheduleRunRecord, scheduleItem } from '#functions/core/schedules/schedule-repository.ts';
import { putAll, queryAll } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import type { Twin } from '#local/twin.ts';
import { median } from './round-trips.ts';
import { fireQueueEmpty, percentile, scheduleRecord, untilInstant } from './schedules.ts';
import { twinData } from './twin-api.ts';

export interface NoisyWebhookRow {
  /** Alerts the noisy tenant fired at its receiver that never answers (0: the quiet tenant alone). */
  noisyAlerts: number;
  /** The quiet tenant's deliveries measured, and those that never arrived. */
  quietDeliveries: number;
  lost: number;
  /** From the quiet tenant's fire answered (queued) until its receiver had the delivery. */
  p50Ms: number;
  p99Ms: number;
}

export interface NoisyScheduleRow {
  /** Schedules of the noisy tenant due in the same minute (0: the quiet tenants alone). */
  noisyDue: number;
  /** The quiet tenants' schedules due, and how many fired. */
  quietDue: number;
  quietFired: number;
  /** Rounds measured (each a minute's slot): the figures below are their medians. */
  rounds: number;
  /** Fire time minus slot, of the quiet tenants' schedules. */
  p50Ms: number;
  p99Ms: number;
  /** The lowest and highest round's p99. */
  p99SpreadMs: [number, number];
  /** The noisy tenant's, for comparison: when its last schedule fired. */
  noisyLastMs?: number;
}

export interface NoisyResult {
  webhooks: NoisyWebhookRow[];
  schedules: NoisyScheduleRow[];
}

/** The quiet tenant fires an alert this often, this many times, starting this long after the noisy tenant began. */
const quietEveryMs = 500;
const quietAlerts = 80;
const quietStartMs = 2_000;
/** The noisy tenant's alerts go out this many at a time (clients of one integrator, firing at once). */
const noisyConcurrency = 25;

const listen = async (server: Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const close = (server: Server) => {
  server.closeAllConnections();
  server.close();
};

/** A tenant whose webhook goes to `url`, with one alert; `fire` queues a delivery and answers its webhook-id. */
async function alertingTenant(twin: Pick<Twin, 'url' | 'clientToken'>, nome: string, url: string) {
  const tenant = await twinData(twin, 'POST', '/tenants', twin.clientToken, { nome, ativo: true });
  const token = tenant.token as string;
  await twinData(twin, 'PATCH', '/tenant/settings', token, { alertChannels: { webhook: { url } } });
  const alert = await twinData(twin, 'POST', '/tenant/alerts', token, {
    nome,
    channels: { webhook: true },
    content: [{ type: 'text', nome: 'Intro', generated: { text: 'Stock is low' } }],
  });
  return {
    fire: async (user: number) =>
      (await twinData(twin, 'POST', `/tenant/alerts/${alert.id}/fire`, token, { user: { id: user + 1 } })).webhookId as string,
    /** Stops its deliveries (they fail at their next receive), so the next scenario starts without them. */
    disable: () => twinData(twin, 'PATCH', '/tenant/settings', token, { alertChannels: { webhook: { enabled: false } } }),
  };
}

/**
 * The quiet tenant fires `quietAlerts` alerts, one every `quietEveryMs`, to a receiver that answers
 * at once; with `noisyAlerts` > 0, a noisy tenant first fires that many to a receiver that takes
 * every connection and never answers (each attempt waits out the 10-second time-out), and the quiet
 * tenant starts `quietStartMs` later.
 */
async function webhookScenario(twin: Pick<Twin, 'url' | 'clientToken'>, noisyAlerts: number): Promise<NoisyWebhookRow> {
  const arrived = new Map<string, number>();
  const quietReceiver = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      arrived.set(String(request.headers['webhook-id']), Date.now());
      response.end('ok');
    });
  });
  // Takes the request and never answers.
  const silentReceiver = createServer((request) => request.resume());
  const quietUrl = await listen(quietReceiver);
  const silentUrl = await listen(silentReceiver);
  try {
    const quiet = await alertingTenant(twin, `Quiet beside ${noisyAlerts}`, `${quietUrl}/hook`);
    const noisy = noisyAlerts > 0 ? await alertingTenant(twin, `Noisy ${noisyAlerts}`, `${silentUrl}/hook`) : undefined;
    let next = 0;
    const noisyFiring = noisy
      ? Promise.all(
          Array.from({ length: noisyConcurrency }, async () => {
            for (let index = next++; index < noisyAlerts; index = next++) await noisy.fire(index);
          }),
        )
      : Promise.resolve([]);
    if (noisy) await new Promise((resolve) => setTimeout(resolve, quietStartMs));
    const queued = new Map<string, number>();
    const started = Date.now();
    for (let index = 0; index < quietAlerts; index++) {
      const wait = started + index * quietEveryMs - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const webhookId = await quiet.fire(index);
      queued.set(webhookId, Date.now());
    }
    await noisyFiring;
    // Every quiet delivery, or two minutes for the stragglers.
    const deadline = Date.now() + 120_000;
    while ([...queued.keys()].some((id) => !arrived.has(id)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const latencies = [...queued].flatMap(([id, at]) => {
      const received = arrived.get(id);
      return received === undefined ? [] : [Math.max(0, received - at)];
    });
    await noisy?.disable();
    return {
      noisyAlerts,
      quietDeliveries: queued.size,
      lost: queued.size - latencies.length,
      p50Ms: median(latencies),
      p99Ms: percentile(latencies, 0.99),
    };
  } finally {
    close(quietReceiver);
    close(silentReceiver);
  }
}

export async function measureNoisyWebhooks(
  twin: Pick<Twin, 'url' | 'clientToken'>,
  noisySizes = [0, 300, 3_000],
): Promise<NoisyWebhookRow[]> {
  const rows: NoisyWebhookRow[] = [];
  for (const noisyAlerts of noisySizes) {
    process.stderr.write(`  webhooks: a quiet tenant beside ${noisyAlerts} alerts to a receiver that never answers...\n`);
    rows.push(await webhookScenario(twin, noisyAlerts));
  }
  return rows;
}

/** Quiet tenants, each with a few schedules due at the slot; one noisy tenant with thousands due at the same slot. */
const quietTenants = 20;
export const quietSchedulesEach = 5;
/** Rounds of each case (alone, beside the noisy tenant), in turn. */
const noisyScheduleRounds = 3;
const minuteMs = 60_000;

export async function measureNoisySchedules(
  twin: Pick<Twin, 'url' | 'clientToken' | 'sqsEndpoint' | 'queueUrls'>,
  noisySizes = [0, 10_000],
): Promise<NoisyScheduleRow[]> {
  const template = await twinData(twin, 'POST', '/tenants/templates', twin.clientToken, {
    nome: 'Bench noisy schedules',
    connections: [{ key: 'db', nome: 'DB', kind: 'postgres' }],
    desks: [{ key: 'd', nome: 'D' }],
    tables: [{ key: 'a', nome: 'a', desk: 'd', columns: [{ column_name: 'x', data_type: 'text', label: 'X' }] }],
    flows: [{ key: 'a', nome: 'a', connection: 'db', reads: [], writes: ['a'], context: 'full' }],
  });
  const tenant = async (nome: string) => {
    const created = await twinData(twin, 'POST', '/tenants', twin.clientToken, { nome, ativo: true, templateId: template.id });
    const agent = await twinData(twin, 'POST', '/tenant/agents/1/token', created.token as string);
    return { id: created.id as number, agent: agent.token as string };
  };
  // The noisy tenant is made first: its id, and so its index entries, sort before the quiet tenants' in each turn
  // of a minute, in every shard's pages (the worse case for them).
  const noisyTenant = await tenant('Noisy schedules');
  const quiet: { id: number; agent: string }[] = [];
  for (let index = 0; index < quietTenants; index++) quiet.push(await tenant(`Quiet schedules ${index}`));
  /** One minute's round: the quiet tenants' schedules due at a slot, beside `noisyDue` of the noisy tenant's. */
  const round = async (noisyDue: number): Promise<Omit<NoisyScheduleRow, 'p99SpreadMs' | 'rounds'>> => {
    process.stderr.write(`  schedules: quiet tenants' fires beside one tenant with ${noisyDue} due in the same minute...\n`);
    const noisy = noisyDue > 0 ? noisyTenant : undefined;
    const slot = Math.ceil((Date.now() + 45_000) / minuteMs) * minuteMs;
    const slotIso = new Date(slot).toISOString();
    const quietSchedules = quiet.flatMap((own) =>
      Array.from({ length: quietSchedulesEach }, (_, index) => scheduleRecord(own.id, slot / minuteMs + index, slotIso, [1])),
    );
    const noisySchedules = noisy
      ? Array.from({ length: noisyDue }, (_, index) => scheduleRecord(noisy.id, index + 1, slotIso, [1]))
      : [];
    await putAll([...quietSchedules, ...noisySchedules].map(scheduleItem));
    // Agents are online for two minutes after a heartbeat.
    for (const own of [...quiet, ...(noisy ? [noisy] : [])]) await twinData(twin, 'POST', '/agent/heartbeat', own.agent);
    await untilInstant(slot);
    const tick = await dispatchDueSchedules(Date.now(), { deadline: Date.now() + 45_000 });
    await fireQueueEmpty(twin);
    const runsOf = async (tenantId: number) =>
      (await queryAll<ScheduleRunRecord>(stored.scheduleRun.partition({ tenantId }), stored.scheduleRun.keyPrefix({}))).filter(
        (run) => run.slot === slotIso && run.status === 'fired',
      );
    const quietRuns = (await Promise.all(quiet.map((own) => runsOf(own.id)))).flat();
    const lateness = quietRuns.map((run) => Date.parse(run.firedAt) - slot);
    const noisyLateness = noisy ? (await runsOf(noisy.id)).map((run) => Date.parse(run.firedAt) - slot) : [];
    process.stderr.write(
      `    quiet fired ${quietRuns.length} of ${quietSchedules.length}, p99 ${percentile(lateness, 0.99)} ms; noisy fired ${noisyLateness.length} of ${noisyDue}; the tick listed ${tick.listed} (${tick.continued} shards continued)\n`,
    );
    return {
      noisyDue,
      quietDue: quietSchedules.length,
      quietFired: quietRuns.length,
      p50Ms: median(lateness),
      p99Ms: percentile(lateness, 0.99),
      ...(noisy ? { noisyLastMs: Math.max(...noisyLateness) } : {}),
    };
  };
  // Each case several times, the cases in turn (so that a slower stretch of the machine weighs on each alike):
  // one minute's p99 of 100 fires is its slowest fire, which varied from 1.1 to 3.3 s between runs.
  const measured = new Map<number, Omit<NoisyScheduleRow, 'p99SpreadMs' | 'rounds'>[]>();
  for (let repeat = 0; repeat < noisyScheduleRounds; repeat++) {
    for (const noisyDue of noisySizes) measured.set(noisyDue, [...(measured.get(noisyDue) ?? []), await round(noisyDue)]);
  }
  const rows: NoisyScheduleRow[] = [...measured].map(([noisyDue, rounds]) => {
    const p99s = rounds.map((one) => one.p99Ms);
    const noisyLast = rounds.flatMap((one) => (one.noisyLastMs === undefined ? [] : [one.noisyLastMs]));
    return {
      noisyDue,
      rounds: rounds.length,
      quietDue: rounds.reduce((sum, one) => sum + one.quietDue, 0),
      quietFired: rounds.reduce((sum, one) => sum + one.quietFired, 0),
      p50Ms: median(rounds.map((one) => one.p50Ms)),
      p99Ms: median(p99s),
      p99SpreadMs: [Math.min(...p99s), Math.max(...p99s)],
      ...(noisyLast.length > 0 ? { noisyLastMs: median(noisyLast) } : {}),
    };
  });
  return rows;
}
