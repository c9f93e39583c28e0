import { isDeepStrictEqual } from 'node:util';
import { schemaErrors } from '#functions/core/api/validation.ts';
import scheduleV2Schema from '#functions/core/api/validators/schedule.v2.cjs';
import type { UpdateTenantBody } from '#functions/core/api/validators/update-tenant.cjs';
import type { FieldError } from '#functions/core/errors.ts';
import { ownValue } from '#functions/core/own-property.ts';
import { horizonEnd, horizonStart, maxWindowPeriod, withinHorizon } from './instants.ts';
import type { ScheduleBody, ScheduleFile } from './schedule-types.ts';
import { parseStartWhen } from './trigger-engine.ts';
import { isKnownZone } from './zone-clock.ts';

/** Whether a tenant's schedules may use Minute triggers (spec 2.7); `hours` unless the client chose otherwise. */
export type SchedulingGranularity = NonNullable<UpdateTenantBody['schedulingGranularity']>;
export const defaultSchedulingGranularity: SchedulingGranularity = 'hours';

/** Body fields only the service writes (spec 2.7 audit fields and version): ignored when sent. */
const readOnlyBodyFields = ['createdAt', 'createdBy', 'updatedAt', 'updatedBy', 'version'] as const;

const bodyError = (pointer: string, message: string): FieldError => ({ location: 'body', pointer, message });

export const minuteTriggersNeedMinutes = "is Minute, which needs the tenant's schedulingGranularity to be minutes";

const plainInstant = (instant: number) => new Date(instant).toISOString().replace('.000Z', 'Z');
/** What a start_when outside the horizon (instants.ts) is told. */
export const outsideHorizon = `must be an instant from ${plainInstant(horizonStart)} up to, not including, ${plainInstant(horizonEnd)}`;

/**
 * Checks a schedule file: the v2 schema, and what a schema cannot say (a known IANA time zone,
 * start_when date-times that exist and lie within the horizon, Minute triggers only with minute
 * granularity). Every problem is reported, each at its JSON pointer, also when the schema already
 * failed elsewhere. Whether the flows belong to the tenant needs the table and is checked by the caller.
 */
export function scheduleFileErrors(value: unknown, granularity: SchedulingGranularity): FieldError[] {
  const errors = schemaErrors(scheduleV2Schema, value);
  const failing = new Set(errors.map((error) => error.pointer));
  const body = objectAt(value, 'body');
  const timezone = body?.timezone;
  const zoneKnown = typeof timezone === 'string' && isKnownZone(timezone);
  if (typeof timezone === 'string' && timezone !== '' && !zoneKnown) {
    errors.push(bodyError('/body/timezone', 'is not a known IANA time zone (e.g. America/Sao_Paulo)'));
  }
  const triggers = Array.isArray(body?.triggers) ? (body.triggers as unknown[]) : [];
  triggers.forEach((trigger, index) => {
    const { type, period, start_when: startWhen } = objectAt({ trigger }, 'trigger') ?? {};
    const at = `/body/triggers/${index}`;
    if (type === 'Minute' && granularity !== 'minutes') errors.push(bodyError(`${at}/type`, minuteTriggersNeedMinutes));
    const windowed = type === 'Hour' || type === 'Minute';
    // The schema's maximum says so too; checked here as well, so that no validator compiled before it lets one through.
    if (windowed && typeof period === 'number' && period > maxWindowPeriod && !failing.has(`${at}/period`)) {
      errors.push(bodyError(`${at}/period`, `must be <= ${maxWindowPeriod}`));
    }
    if (windowed && zoneKnown && typeof startWhen === 'string' && !failing.has(`${at}/start_when`)) {
      const instant = parseStartWhen(startWhen, timezone);
      if (instant === undefined) errors.push(bodyError(`${at}/start_when`, 'is not a date-time that exists'));
      else if (!withinHorizon(instant)) errors.push(bodyError(`${at}/start_when`, outsideHorizon));
    }
  });
  return errors;
}

/** `value[name]` when it is a plain object (an own property: the value is whatever was sent). */
function objectAt(value: unknown, name: string): Record<string, unknown> | undefined {
  const child = typeof value === 'object' && value !== null ? ownValue(value as Record<string, unknown>, name) : undefined;
  return typeof child === 'object' && child !== null && !Array.isArray(child) ? (child as Record<string, unknown>) : undefined;
}

export const hasMinuteTrigger = (body: Pick<ScheduleBody, 'triggers'>) =>
  body.triggers.some((trigger) => trigger.type === 'Minute');

/** The file as its author wrote it: without the fields the service sets. */
export function authoredContent(file: ScheduleFile): ScheduleFile {
  const body = { ...file.body };
  for (const field of readOnlyBodyFields) delete body[field];
  return { ...(file.fileName === undefined ? {} : { fileName: file.fileName }), header: file.header, body };
}

/** `value`'s own keys: `first` in that order (those it has), then the others alphabetically. */
function ordered<T extends object>(value: T, first: readonly string[]): T {
  const entries = Object.entries(value);
  const rank = (key: string) => (first.includes(key) ? first.indexOf(key) : first.length);
  return Object.fromEntries(
    entries.sort(([a], [b]) => rank(a) - rank(b) || (rank(a) === first.length ? a.localeCompare(b) : 0)),
  ) as T;
}

/**
 * The file with its keys in spec 2.7's order, whatever order the store gives them back in (a
 * DynamoDB map keeps none): `fileName`, `header`, `body`; the body's fields as the spec lists them,
 * then the audit fields, then any extra property; each flow and trigger likewise.
 */
export function inSpecOrder(file: ScheduleFile): ScheduleFile {
  const body = ordered(file.body, [
    'nome',
    'ativo',
    'timezone',
    'version',
    'flows',
    'triggers',
    'tags',
    'createdAt',
    'createdBy',
    'updatedAt',
    'updatedBy',
  ]);
  return ordered(
    {
      ...file,
      header: ordered(file.header, ['id', 'kind']),
      body: {
        ...body,
        flows: body.flows.map((flow) => ordered(flow, ['flow_etl_id', 'context'])),
        triggers: body.triggers.map((trigger) => ordered(trigger, ['type', 'period', 'start_when', 'start_time', 'end_time'])),
      },
    },
    ['fileName', 'header', 'body'],
  );
}

/** Same content, whatever the audit fields and key order say: a PUT of it changes nothing. */
export const sameContent = (a: ScheduleFile, b: ScheduleFile) => isDeepStrictEqual(authoredContent(a), authoredContent(b));
