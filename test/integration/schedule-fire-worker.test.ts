/**
 * The fire worker invoked as Lambda invokes it, in this process, on fire messages built here, over
 * the real pieces (DynamoDB Local, fauxqs, the twin's reload worker, the agent API): a worker that
 * dies part-way through a batch, a slot too late to fire, a message that is not one, and the
 * lateness metric. Its slots are in 2021, after every instant the dispatcher tests tick at (2020),
 * so no tick of theirs lists these schedules.
 */
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterEach, describe, expect, test } from 'vitest';
import { emfOf } from '#test/support/emf.ts';

// The twin silences EMF; the lateness metric is under test here. Set before the modules read it.
process.env.POWERTOOLS_METRICS_DISABLED = 'false';
const { handler } = await import('#functions/workers/schedule-fire-worker.ts');
const { db } = await import('#functions/core/store/dynamo.ts');
const { sqs } = await import('#functions/core/store/queues.ts');
const { fireDueSchedules } = await import('#functions/core/schedules/fire.ts');
const { findSchedule, listScheduleRuns, putFailedRun } = await import('#functions/core/schedules/schedule-repository.ts');
const { putSchedule } = await import('#functions/core/schedules/schedules.ts');
const { invoke: invokeAsLambda } = await import('#local/lambda-context.ts');
const { api } = await import('#test/support/api.ts');
const { scheduleFile, tenantWithFlows } = await import('#test/support/schedules.ts');
const { agentToken, eventually } = await import('#test/support/templates.ts');

const writtenAt = Date.parse('2021-03-01T00:00:00Z');
// 06:30 in São Paulo (UTC-03:00).
const slot = '2021-03-01T09:30:00.000Z';
const nextDay = '2021-03-02T09:30:00.000Z';

afterEach(() => {
  db().middlewareStack.remove('simulatedCrash');
  db().middlewareStack.remove('claimsTogether');
  sqs().middlewareStack.remove('simulatedQueueFailure');
});

/** `count` schedules of a new tenant, each starting one flow every day at 06:30, due at `slot`. */
async function dueSchedules(count: number) {
  const setup = await tenantWithFlows();
  const agent = await agentToken(setup.tenant.token);
  await api('POST', '/agent/heartbeat', { token: agent });
  const ids = Array.from({ length: count }, (_, index) => index + 1);
  for (const id of ids) {
    const file = scheduleFile(id, [setup.flows['load-orders'] as number]);
    await putSchedule(setup.tenant.id, id, file, { actor: 'test', now: writtenAt });
  }
  const runsOf = async (id: number) => (await listScheduleRuns(setup.tenant.id, id, 10, undefined)).items;
  const due = ids.map((scheduleId) => ({ tenantId: setup.tenant.id, scheduleId, dueAt: slot }));
  return { ...setup, agent, ids, due, runsOf };
}

let messageNumber = 0;
/** An SQS record of the fire queue, as the event source mapping hands it over. */
function record(body: unknown): SQSRecord {
  messageNumber += 1;
  return {
    messageId: `fire-message-${messageNumber}`,
    receiptHandle: `receipt-${messageNumber}`,
    body: typeof body === 'string' ? body : JSON.stringify(body),
    attributes: {
      ApproximateReceiveCount: '1',
      SentTimestamp: String(Date.now()),
      SenderId: 'test',
      ApproximateFirstReceiveTimestamp: String(Date.now()),
    },
    messageAttributes: {},
    md5OfBody: '',
    eventSource: 'aws:sqs',
    eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:fire',
    awsRegion: 'us-east-1',
  };
}

/** A fire message as a tick at `now` sends it, the tick having started `startedAgoMs` before this one is handled. */
const fireMessage = <Schedule>(schedules: Schedule[], now = Date.parse(slot) + 5_000, startedAgoMs = 0) => ({
  now,
  startedAt: Date.now() - startedAgoMs,
  schedules,
});

const invoke = (records: SQSRecord[]) =>
  invokeAsLambda(handler, { Records: records } as SQSEvent, 'schedule-fire-worker', 20_000);

/** Makes DynamoDB refuse every claim (UpdateItem) after the first `allowed`: the worker dies before those. */
function crashAfterClaims(allowed: number): void {
  let claims = 0;
  db().middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'UpdateItemCommand' && ++claims > allowed) {
        throw new Error('Simulated crash: the worker died before this claim');
      }
      return next(args);
    },
    { step: 'initialize', name: 'simulatedCrash' },
  );
}

/** Holds every claim (UpdateItem) until `racers` of them are waiting: all racers have read the schedule before any claims it. */
function claimsTogether(racers: number): void {
  let waiting = 0;
  let release: () => void = () => undefined;
  const allWaiting = new Promise<void>((resolve) => {
    release = resolve;
  });
  db().middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'UpdateItemCommand') {
        if (++waiting === racers) release();
        await allWaiting;
      }
      return next(args);
    },
    { step: 'initialize', name: 'claimsTogether' },
  );
}

/** Makes SQS refuse the next `failures` sends of the functions (the flows' loads go to the reload queue). */
function failQueueSends(failures: number): void {
  let failed = 0;
  sqs().middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName?.startsWith('SendMessage') && failed < failures) {
        failed += 1;
        throw new Error('Simulated SQS outage');
      }
      return next(args);
    },
    { step: 'initialize', name: 'simulatedQueueFailure' },
  );
}

/** The loads waiting for the agent, once there are `count` (the reload worker runs in the twin, asynchronously). */
const loadsWaiting = (agent: string, count: number) =>
  eventually(async () => {
    const answer = await api('POST', '/agent/heartbeat', { token: agent });
    return answer.body.data.runs.length >= count ? (answer.body.data.runs as Array<{ batchId: string }>) : undefined;
  });

describe('schedule fire worker', () => {
  test('a worker that dies part-way through a batch loses nothing: when the messages come back, each slot fires once', async () => {
    const schedules = await dueSchedules(12);
    const batch = [record(fireMessage(schedules.due.slice(0, 10))), record(fireMessage(schedules.due.slice(10)))];

    // Five claims go through; from the sixth on, the loads are queued and the runs written, but the claims never made.
    crashAfterClaims(5);
    const crashed = await invoke(batch).catch(() => ({
      batchItemFailures: batch.map((failed) => ({ itemIdentifier: failed.messageId })),
    }));
    db().middlewareStack.remove('simulatedCrash');
    expect(crashed.batchItemFailures.length).toBeGreaterThan(0);
    const movedOn = await Promise.all(schedules.ids.map(async (id) => (await findSchedule(schedules.tenant.id, id))?.nextFireAt));
    expect(movedOn.filter((nextFireAt) => nextFireAt === nextDay)).toHaveLength(5);

    // SQS hands the whole batch over again (a crashed invocation reports nothing).
    expect(await invoke(batch)).toEqual({ batchItemFailures: [] });
    for (const id of schedules.ids) {
      const runs = await schedules.runsOf(id);
      expect(runs.map((run) => [run.slot, run.status])).toEqual([[slot, 'fired']]);
      expect((await findSchedule(schedules.tenant.id, id))?.nextFireAt).toBe(nextDay);
    }
    // Every schedule's load reached the agent once, though seven were queued twice.
    const loads = await loadsWaiting(schedules.agent, 12);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const later = await loadsWaiting(schedules.agent, 12);
    expect(later).toHaveLength(12);
    expect(new Set(loads.map((load) => load.batchId)).size).toBe(12);
  });

  test('a slot that would fire an hour or more late is moved on without firing, and counted as ScheduleMisses', async () => {
    const schedules = await dueSchedules(1);
    // The tick saw it 50 minutes late, and its message waited 15 minutes more.
    const late = fireMessage(schedules.due, Date.parse(slot) + 50 * 60_000, 15 * 60_000);
    let answer: unknown;
    const documents = await emfOf(async () => {
      answer = await invoke([record(late)]);
    });
    expect(answer).toEqual({ batchItemFailures: [] });
    expect(await schedules.runsOf(1)).toEqual([]);
    expect((await findSchedule(schedules.tenant.id, 1))?.nextFireAt).toBe(nextDay);
    expect(documents.flatMap((document) => document.ScheduleMisses ?? [])).toEqual([1]);
  });

  test('two workers racing for one slot, both past their read: one claim wins, the slot fires once', async () => {
    const schedules = await dueSchedules(1);
    claimsTogether(2);
    const outcomes = await Promise.all([
      fireDueSchedules(fireMessage(schedules.due)),
      fireDueSchedules(fireMessage(schedules.due)),
    ]);
    expect(outcomes).toHaveLength(2);
    expect(outcomes).toEqual(expect.arrayContaining([{ fired: 1 }, { moved_on: 1 }]));
    expect((await schedules.runsOf(1)).map((run) => [run.slot, run.status])).toEqual([[slot, 'fired']]);
    expect((await findSchedule(schedules.tenant.id, 1))?.nextFireAt).toBe(nextDay);
  });

  test('flows that cannot be queued leave the slot unclaimed with a failed run; the retry fires it and replaces the run', async () => {
    const schedules = await dueSchedules(1);
    const message = record(fireMessage(schedules.due));
    failQueueSends(1);
    let failure: unknown;
    const documents = await emfOf(async () => {
      // Its only message failed: Powertools fails the invocation, and SQS retries the batch.
      failure = await invoke([message]).catch((error: unknown) => error);
    });
    sqs().middlewareStack.remove('simulatedQueueFailure');
    expect(String(failure)).toContain('All records failed processing');
    expect(documents.flatMap((document) => document.ScheduleFireFailures ?? [])).toEqual([1]);
    expect((await schedules.runsOf(1)).map((run) => [run.slot, run.status])).toEqual([[slot, 'failed']]);
    expect((await findSchedule(schedules.tenant.id, 1))?.nextFireAt).toBe(slot);

    // SQS hands the message over again.
    expect(await invoke([message])).toEqual({ batchItemFailures: [] });
    expect((await schedules.runsOf(1)).map((run) => [run.slot, run.status])).toEqual([[slot, 'fired']]);
    expect((await findSchedule(schedules.tenant.id, 1))?.nextFireAt).toBe(nextDay);
    expect(await loadsWaiting(schedules.agent, 1)).toHaveLength(1);
  });

  test('a failed run never replaces the fired run of the same slot', async () => {
    const schedules = await dueSchedules(1);
    expect(await invoke([record(fireMessage(schedules.due))])).toEqual({ batchItemFailures: [] });
    const [fired] = await schedules.runsOf(1);
    await putFailedRun({ ...(fired as NonNullable<typeof fired>), status: 'failed', flows: [], error: 'late duplicate' });
    expect(await schedules.runsOf(1)).toEqual([fired]);
  });

  test('a message that is not a fire message fails alone; the rest of the batch fires', async () => {
    const schedules = await dueSchedules(1);
    const garbage = record('{"schedules":"not a list"}');
    const answer = await invoke([garbage, record(fireMessage(schedules.due))]);
    expect(answer).toEqual({ batchItemFailures: [{ itemIdentifier: garbage.messageId }] });
    expect(await schedules.runsOf(1)).toHaveLength(1);
  });

  test('each fire reports its lateness, fire time minus slot, as the ScheduleFireLateness metric (EMF, milliseconds)', async () => {
    const schedules = await dueSchedules(3);
    // The tick ran 7 seconds after the slot.
    const documents = await emfOf(() => invoke([record(fireMessage(schedules.due, Date.parse(slot) + 7_000))]));
    const lateness = documents.flatMap((document) => document.ScheduleFireLateness ?? []) as number[];
    expect(lateness).toHaveLength(3);
    for (const value of lateness) expect(value).toBeGreaterThanOrEqual(7_000);
    const definitions = JSON.stringify(documents.map((document) => document._aws));
    expect(definitions).toContain('{"Name":"ScheduleFireLateness","Unit":"Milliseconds"}');
    const fires = documents.flatMap((document) => document.ScheduleFires ?? []) as number[];
    expect(fires.reduce((sum, value) => sum + value, 0)).toBe(3);
  });
});
