/**
 * Migration 2: every schedule and schedule run in the shape this release reads. Earlier versions
 * stored a next fire past the schedule horizon as `+010000-01-01T00:00:00.000Z` (its due-index key
 * sorted before every real instant, so each tick listed it), wrote due-index keys without the turn
 * (`<instant>#<tenant>#<schedule>`), and wrote a run before queueing its flows (`status: 'firing'`),
 * finished by a second write that a worker stopped in between never made.
 *
 * Such a schedule gets its next fire computed again from now (none past the horizon: it leaves the
 * due index), or keeps its next fire with the entry this release computes, in one update conditional
 * on the version and next fire it was read with. Such a run is marked `failed`, conditional on its
 * status: its slot was claimed, so nothing retried it, and whether its flows were queued was never
 * recorded. A write whose condition fails found the item rewritten since (every writer writes the
 * current shape) or gone: nothing is left to do.
 */
import { horizonEnd, horizonStart, isUtcInstant, utcInstant } from '#functions/core/schedules/instants.ts';
import {
  advanceSchedule,
  markRunFailed,
  type ScheduleRecord,
  type ScheduleRunRecord,
} from '#functions/core/schedules/schedule-repository.ts';
import { nextFireAfter } from '#functions/core/schedules/schedules.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import type { Migration } from '#functions/core/store/migrations.ts';

const runsPrefix = stored.scheduleRun.keyPrefix({});

/** The status earlier versions left on a run whose worker stopped before recording its flows. */
const unfinished = 'firing';

/** What such a run says once marked `failed`. */
export const unrecordedFlows =
  'An earlier version of the service stopped while firing this slot, before recording whether its flows were queued';

export const schedulesInCurrentShape: Migration = {
  version: 2,
  name: 'schedules-in-current-shape',
  selects: [
    {
      entity: stored.schedule,
      // A next fire that is not an instant of the horizon (as strings: every instant the service wrote is an ISO
      // string, and those of five-digit or negative years sort before '1970'), or a due-index key without
      // `#t<turn>` (entity-declarations.ts: schedule).
      where: {
        expression:
          'nextFireAt < :horizonStart OR nextFireAt >= :horizonEnd OR (attribute_exists(gsi1sk) AND NOT contains(gsi1sk, :turn))',
        values: {
          ':horizonStart': utcInstant(horizonStart),
          ':horizonEnd': new Date(horizonEnd).toISOString(),
          ':turn': '#t',
        },
      },
    },
    {
      entity: stored.scheduleRun,
      where: { expression: '#status = :unfinished', names: { '#status': 'status' }, values: { ':unfinished': unfinished } },
    },
  ],
  async migrate(item) {
    if (String(item.sk).startsWith(runsPrefix)) {
      await markRunFailed(item as unknown as ScheduleRunRecord, unfinished, unrecordedFlows);
      return;
    }
    const record = item as unknown as ScheduleRecord;
    // A next fire within the horizon stays, with its entry rewritten; one past it is computed again.
    const nextFireAt = isUtcInstant(record.nextFireAt) ? record.nextFireAt : nextFireAfter(record.file.body, Date.now());
    await advanceSchedule(record, nextFireAt);
  },
};
