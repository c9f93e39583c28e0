import { logger } from '#functions/core/observability/logger.ts';
import { sendBatches, type TenantMessage } from '#functions/core/store/queues.ts';
import { dispatchSettings } from './dispatch-settings.ts';
import type { FireMessage } from './fire.ts';
import {
  clearDispatchCursor,
  dispatchShardCount,
  type DueSchedule,
  dueSchedulesPage,
  findDispatchCursor,
  saveDispatchCursor,
} from './schedule-repository.ts';

const minuteMs = 60_000;
/** Due schedules per fire-queue message: a worker's partial batch failure then retries at most this many. */
export const schedulesPerMessage = 10;

/**
 * Due schedules a tick lists, over all its shards, before it sends any (each shard lists at least a
 * page). A shard lists in turns, so a quiet tenant whose schedules have high turns comes after pages
 * of a noisy tenant's there; sent page by page, those pages would reach the fire workers first and
 * take every one of them, and the quiet tenant, though the fair queue then puts it first, would wait
 * for a worker to finish a noisy batch. Listed together and sent fewest first, every tenant in the
 * first listing is queued before the noisy tenant's second message. About 100 bytes each in memory.
 */
export const firstListingSchedules = 20_000;

/**
 * A page's schedules as fire messages: each of one tenant (its message group on the fair queue,
 * so a tenant with thousands due is served after the tenants with a few), at most
 * `schedulesPerMessage` to a message. The tenants with the fewest schedules in the page go first:
 * the fair queue can only put a quiet tenant first once its message is sent, and a page sends its
 * messages in order, so a tenant with hundreds in the page would otherwise be ahead in every shard.
 * Within a tenant, the page's order.
 */
export function fireMessages(schedules: readonly DueSchedule[], now: number, startedAt: number): TenantMessage[] {
  const byTenant = new Map<number, DueSchedule[]>();
  for (const schedule of schedules) {
    const own = byTenant.get(schedule.tenantId);
    if (own) own.push(schedule);
    else byTenant.set(schedule.tenantId, [schedule]);
  }
  // A stable sort: tenants with as many schedules keep the page's order.
  return [...byTenant]
    .sort(([, a], [, b]) => a.length - b.length)
    .flatMap(([tenantId, own]) =>
      Array.from({ length: Math.ceil(own.length / schedulesPerMessage) }, (_, index) => ({
        tenantId,
        body: {
          now,
          startedAt,
          schedules: own.slice(index * schedulesPerMessage, (index + 1) * schedulesPerMessage),
        } satisfies FireMessage,
      })),
    );
}

export interface TickSummary {
  tick: string;
  /** Schedules found due and sent to the fire queue. */
  listed: number;
  messages: number;
  /** Shards whose listing ran out of time: the next tick continues them from where this one stopped. */
  continued: number;
}

export interface TickOptions {
  /** Wall-clock time (ms) after which no shard starts another page; each shard lists at least one. */
  deadline?: number;
  /** Overrides the stack's page size (tests use small pages). */
  pageSize?: number;
  /** Overrides firstListingSchedules (tests list less). */
  firstListing?: number;
}

/**
 * One dispatcher tick (EventBridge `rate(1 minute)`, or the twin's clock): lists the schedules due
 * at `now` from every shard of the next-fire index, oldest first, and sends them to the fire queue,
 * where fire workers claim and fire each (fire.ts). The tick only finds due work, so its cost is a
 * Query per page and a SendMessageBatch per hundred schedules, whatever firing them costs.
 *
 * A shard whose listing is not finished by `deadline` keeps a cursor, and the next tick continues
 * after it before anything newer, so a backlog larger than one tick can list is never skipped. A
 * finished listing drops the cursor, so the tick after it starts again from the oldest entry: what
 * is still due then (a fire whose message is still queued or failed) is sent again, which is
 * harmless because each fire is claimed once, and schedules late by an hour or more are moved on
 * by the worker without firing.
 *
 * `now` is the tick's instant; on AWS the wall clock, tests pass instants of their choosing. Fire
 * workers reckon lateness from it plus the time elapsed since the tick started.
 */
export async function dispatchDueSchedules(now = Date.now(), options: TickOptions = {}): Promise<TickSummary> {
  const startedAt = Date.now();
  const tickIso = new Date(Math.floor(now / minuteMs) * minuteMs).toISOString();
  const { dueShards: configuredShards, duePageSize } = dispatchSettings();
  const dueShards = await dispatchShardCount(configuredShards);
  const pageSize = options.pageSize ?? duePageSize;
  const summary: TickSummary = { tick: tickIso, listed: 0, messages: 0, continued: 0 };
  const send = async (schedules: DueSchedule[]) => {
    const messages = fireMessages(schedules, now, startedAt);
    // Batches sent at once are queued in any order: every tenant's first message goes out (and is
    // queued) before any tenant's second, so a tenant's first ten are never behind another's hundreds.
    const firstOfTenant = (message: TenantMessage, index: number) => messages[index - 1]?.tenantId !== message.tenantId;
    await sendBatches('fire', messages.filter(firstOfTenant));
    await sendBatches(
      'fire',
      messages.filter((message, index) => !firstOfTenant(message, index)),
    );
    summary.listed += schedules.length;
    summary.messages += messages.length;
  };
  const outOfTime = () => options.deadline !== undefined && Date.now() >= options.deadline;
  const firstListingLimit = options.firstListing ?? firstListingSchedules;
  let listedFirst = 0;
  /**
   * A shard's part of the first listing, from where the previous tick stopped if it ran out of time:
   * its first page, then more while the listing of every shard holds fewer than firstListingLimit.
   */
  const firstListing = async (shard: number) => {
    const cursor = await findDispatchCursor(shard);
    // A cursor past this tick's instant (left by a tick at a later instant) does not apply to it.
    let last = cursor && cursor <= `${tickIso}#~` ? cursor : undefined;
    const schedules: DueSchedule[] = [];
    do {
      const page = await dueSchedulesPage(shard, tickIso, { after: last, limit: pageSize });
      schedules.push(...page.schedules);
      listedFirst += page.schedules.length;
      last = page.last;
    } while (last !== undefined && listedFirst < firstListingLimit && !outOfTime());
    return { shard, cursor, schedules, last };
  };
  /** The shard's next pages, each sent before the next is read, until the end or the deadline. */
  const restOfShard = async ({ shard, cursor, last: listedTo }: Awaited<ReturnType<typeof firstListing>>) => {
    for (let last = listedTo; last !== undefined;) {
      if (outOfTime()) {
        await saveDispatchCursor(shard, last);
        summary.continued += 1;
        return;
      }
      const next = await dueSchedulesPage(shard, tickIso, { after: last, limit: pageSize });
      await send(next.schedules);
      last = next.last;
    }
    if (cursor) await clearDispatchCursor(shard);
  };
  // The first listing of every shard is sent at once, the tenants with fewest schedules in it first:
  // a tenant with a few due is then queued ahead of the first batches of one with thousands, on every
  // shard, and the fair queue has nothing of the big tenant's to hand out before it.
  const firstListings = await Promise.allSettled(Array.from({ length: dueShards }, (_, shard) => firstListing(shard)));
  const listed = firstListings.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  await send(listed.flatMap(({ schedules }) => schedules));
  // Every shard finishes (its cursor saved or cleared) before a failed one fails the tick.
  const rest = await Promise.allSettled(listed.map(restOfShard));
  const failures = [...firstListings, ...rest].flatMap((result) =>
    result.status === 'rejected' ? [result.reason as unknown] : [],
  );
  if (failures.length > 0) throw new AggregateError(failures, `${failures.length} of ${dueShards} shards could not be listed`);
  if (summary.listed > 0 || summary.continued > 0) logger.info('Dispatcher tick', { ...summary });
  if (summary.continued > 0) {
    logger.warn('The tick ran out of time before listing every due schedule; the next tick continues', { ...summary });
  }
  return summary;
}
