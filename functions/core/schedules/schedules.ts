import { checkIfMatch, etagOf } from '#functions/core/api/if-match.ts';
import { headlineDetail } from '#functions/core/api/validation.ts';
import { toYaml } from '#functions/core/api/yaml-body.ts';
import { badRequest, conflict, type FieldError, notFound, payloadTooLarge } from '#functions/core/errors.ts';
import { mapPage } from '#functions/core/store/dynamo.ts';
import { loadResourcesOfType } from '#functions/core/templates/template-repository.ts';
import { findTenant, tenantNotFound } from '#functions/core/tenants/tenant-repository.ts';
import {
  authoredContent,
  defaultSchedulingGranularity,
  hasMinuteTrigger,
  inSpecOrder,
  sameContent,
  scheduleFileErrors,
} from './schedule-file.ts';
import {
  deleteScheduleRecord,
  findSchedule,
  listScheduleRecords,
  listScheduleRuns,
  type ScheduleRecord,
  schedulesWithMinuteTriggers,
  writeSchedule,
} from './schedule-repository.ts';
import { instantIn, utcInstant } from './instants.ts';
import type { ScheduleBody, ScheduleFile } from './schedule-types.ts';
import { nextFire, nextFires } from './trigger-engine.ts';

export const scheduleNotFound = () => notFound('Schedule not found', 'schedule_not_found');

/**
 * Schedules a tenant may have (bounded growth: a tenant creates nothing without a quota), kept by
 * `COUNT#SCHEDULES` in the tenant's partition, which a PUT that creates a schedule and a DELETE
 * change in their own transactions (store/counts.ts); a PUT that replaces one counts nothing. Past
 * it, a creation is a 409 `schedule_limit`.
 */
export const maxSchedulesPerTenant = 10_000;

/** 409 when the tenant has as many schedules as it may. */
const scheduleLimit = (max: number) =>
  conflict(`A tenant has at most ${max.toLocaleString('en')} schedules: replace or delete one`, 'schedule_limit');

/** 412 unless If-Match (when sent) names the schedule's current version, or is `*` and it exists. */
const checkScheduleIfMatch = (ifMatch: string | undefined, current: ScheduleRecord | undefined) =>
  checkIfMatch(ifMatch, current && etagOf(current.version), 'schedule');

/**
 * What one schedule may take: its item as JSON (under DynamoDB's 400 KB item, with room for the
 * attributes beside the file), and its file as YAML, which GET and PUT answer with when asked and
 * which indentation makes larger than the JSON for deep nesting (under 2 MB once the result escapes
 * it, far within one Lambda result). A file within the body bound can pass either: it is refused
 * before anything is written.
 */
export const maxScheduleItemBytes = 350_000;
export const maxScheduleYamlBytes = 1_000_000;

function checkScheduleSize(record: ScheduleRecord): void {
  const item = Buffer.byteLength(JSON.stringify(record));
  if (item > maxScheduleItemBytes) {
    throw payloadTooLarge(`The schedule would take ${item} bytes stored; a schedule takes at most ${maxScheduleItemBytes}`);
  }
  const yaml = Buffer.byteLength(toYaml(inSpecOrder(record.file)));
  if (yaml > maxScheduleYamlBytes) {
    throw payloadTooLarge(`The schedule is ${yaml} bytes as YAML; a schedule is at most ${maxScheduleYamlBytes} (less nesting)`);
  }
}

const concurrentChange = () =>
  conflict('The schedule changed while this request ran; read it again and retry', 'concurrent_change');

const invalidSchedule = (errors: FieldError[]) =>
  badRequest(`Invalid schedule${headlineDetail(errors)}`, errors, 'validation_failed');

/**
 * PUT /tenant/schedules/{id}: creates or replaces a schedule. Checks everything first (400 listing
 * every problem), honours If-Match (412 on a stale version), sets version and audit fields, and
 * computes the next fire. A PUT of the same content changes nothing (same version). A creation
 * takes one of the tenant's `options.max` schedules (`maxSchedulesPerTenant`; tests pass smaller
 * ones), in its own transaction.
 */
export async function putSchedule(
  tenantId: number,
  scheduleId: number,
  value: unknown,
  options: { ifMatch?: string; actor: string; now?: number; max?: number },
): Promise<{ record: ScheduleRecord; created: boolean }> {
  if (value === undefined) {
    throw badRequest(
      'Request body is required',
      [{ location: 'body', pointer: '', message: 'is required' }],
      'validation_failed',
    );
  }
  const [tenant, flows, existing] = await Promise.all([
    findTenant(tenantId),
    loadResourcesOfType(tenantId, 'flow'),
    findSchedule(tenantId, scheduleId),
  ]);
  if (!tenant || tenant.deletedAt) throw tenantNotFound();
  const errors = scheduleFileErrors(value, tenant.schedulingGranularity ?? defaultSchedulingGranularity);
  // Only the schema check above may assume a shape: the value can be anything (null, an array…).
  const file = (typeof value === 'object' && value !== null ? value : {}) as Partial<ScheduleFile>;
  if (file.header?.id !== undefined && file.header.id !== scheduleId) {
    errors.push({ location: 'body', pointer: '/header/id', message: `must equal the id in the URL (${scheduleId})` });
  }
  const flowIds = new Set(flows.map((flow) => flow.id));
  const scheduled = Array.isArray(file.body?.flows) ? file.body.flows : [];
  scheduled.forEach((flow, index) => {
    if (Number.isInteger(flow?.flow_etl_id) && !flowIds.has(flow.flow_etl_id)) {
      errors.push({ location: 'body', pointer: `/body/flows/${index}/flow_etl_id`, message: 'is not a flow of this tenant' });
    }
  });
  if (errors.length > 0) throw invalidSchedule(errors);
  const valid = value as ScheduleFile;
  checkScheduleIfMatch(options.ifMatch, existing);
  if (existing && sameContent(existing.file, valid)) return { record: existing, created: false };

  const now = options.now ?? Date.now();
  const at = new Date(now).toISOString();
  const authored = authoredContent(valid);
  const version = (existing?.version ?? 0) + 1;
  const { body } = authored;
  const nextFireAt = nextFireAfter(body, now);
  const record: ScheduleRecord = {
    tenantId,
    scheduleId,
    file: {
      ...authored,
      body: {
        ...body,
        version,
        createdAt: existing?.file.body.createdAt ?? at,
        createdBy: existing?.file.body.createdBy ?? options.actor,
        updatedAt: at,
        updatedBy: options.actor,
      },
    },
    version,
    minuteTriggers: hasMinuteTrigger(body),
    ...(nextFireAt === undefined ? {} : { nextFireAt }),
  };
  checkScheduleSize(record);
  const minuteCountChange = (Number(record.minuteTriggers) - Number(existing?.minuteTriggers ?? false)) as -1 | 0 | 1;
  const max = options.max ?? maxSchedulesPerTenant;
  const outcome = await writeSchedule(record, existing?.version, minuteCountChange, max);
  if (outcome === 'limit') throw scheduleLimit(max);
  if (outcome === 'version_changed') throw concurrentChange();
  if (outcome === 'tenant_changed') {
    // The tenant was deleted, or its granularity went back to hours, since it was read.
    const current = await findTenant(tenantId);
    if (!current || current.deletedAt) throw tenantNotFound();
    throw invalidSchedule(scheduleFileErrors(valid, current.schedulingGranularity ?? defaultSchedulingGranularity));
  }
  return { record, created: existing === undefined };
}

/**
 * A schedule's next fire after `now`, as stored: none when it is inactive or no trigger fires again
 * within the horizon (the engine computes no fire at or after its end).
 */
export function nextFireAfter(body: ScheduleBody, now: number): string | undefined {
  const next = body.ativo ? nextFire(body.triggers, body.timezone, now) : undefined;
  return next === undefined ? undefined : utcInstant(next);
}

export async function getSchedule(tenantId: number, scheduleId: number): Promise<ScheduleRecord> {
  const record = await findSchedule(tenantId, scheduleId);
  if (!record) throw scheduleNotFound();
  return record;
}

/** DELETE /tenant/schedules/{id}: honours If-Match; without it, deletes whatever version is current. */
export async function deleteSchedule(tenantId: number, scheduleId: number, ifMatch: string | undefined): Promise<void> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const record = await getSchedule(tenantId, scheduleId);
    checkScheduleIfMatch(ifMatch, record);
    const outcome = await deleteScheduleRecord(record);
    if (outcome === 'written') return;
    if (ifMatch !== undefined) throw concurrentChange();
  }
  throw concurrentChange();
}

/** One line per schedule for GET /tenant/schedules. */
export function summarizeSchedule(record: ScheduleRecord) {
  const { body, header } = record.file;
  return {
    id: record.scheduleId,
    nome: body.nome,
    ativo: body.ativo,
    timezone: body.timezone,
    version: record.version,
    triggers: body.triggers.length,
    flows: body.flows.length,
    nextFireAt: record.nextFireAt ?? null,
    updatedAt: body.updatedAt,
    ...(header.labels ? { labels: header.labels } : {}),
  };
}

export async function listSchedules(tenantId: number, limit: number, cursor: string | undefined) {
  const page = await listScheduleRecords(tenantId, limit, cursor);
  return mapPage(page, summarizeSchedule);
}

/** GET /tenant/schedules/{id}/next: the next `count` fires after `now` (none when inactive). */
export async function previewFires(tenantId: number, scheduleId: number, count: number, now = Date.now()) {
  const { body } = (await getSchedule(tenantId, scheduleId)).file;
  const fires = body.ativo ? nextFires(body.triggers, body.timezone, now, count) : [];
  return {
    id: scheduleId,
    ativo: body.ativo,
    timezone: body.timezone,
    fires: fires.map((instant) => instantIn(instant, body.timezone)),
  };
}

/**
 * GET /tenant/schedules/{id}/runs: newest first. One level: the page read beside the schedule, both in
 * the tenant's partition. The schedule decides: when it is gone (its runs outlive it until they
 * expire), the page is dropped, its failure too (a cursor of another list is still the 404).
 */
export async function listRuns(tenantId: number, scheduleId: number, limit: number, cursor: string | undefined) {
  const runs = listScheduleRuns(tenantId, scheduleId, limit, cursor);
  runs.catch(() => undefined);
  await getSchedule(tenantId, scheduleId);
  const page = await runs;
  return mapPage(page, ({ slot, slotLocal, firedAt, scheduleVersion, status, flows, error }) => ({
    slot,
    slotLocal,
    firedAt,
    scheduleVersion,
    status,
    flows,
    ...(error ? { error } : {}),
  }));
}

/**
 * Refuses to take the tenant back to hours while schedules have Minute triggers: a 409 that lists
 * them (nothing when none has, as when the write failed for another reason).
 */
export async function refuseMinuteSchedules(tenantId: number): Promise<void> {
  const blocking = await schedulesWithMinuteTriggers(tenantId);
  if (blocking.length === 0) return;
  throw conflict(
    `schedulingGranularity cannot be hours while schedules have Minute triggers: ${blocking
      .map((record) => record.scheduleId)
      .join(', ')}`,
    'minute_triggers_in_use',
    blocking.map((record) => ({
      location: 'body',
      pointer: '/schedulingGranularity',
      message: `schedule ${record.scheduleId} (${JSON.stringify(record.file.body.nome)}) has Minute triggers`,
    })),
  );
}
