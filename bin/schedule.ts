/**
 * Schedule files, offline: `npm run schedule -- validate <file...>` checks them exactly as
 * PUT /tenant/schedules/{id} does (except that their flows belong to a tenant), and
 * `npm run schedule -- next <file> --count N` prints their next fires.
 */
import { readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { maxBodyBytes } from '#functions/core/api/request-body.ts';
import { parseYamlBody } from '#functions/core/api/yaml-body.ts';
import { ServiceError } from '#functions/core/errors.ts';
import { instantIn } from '#functions/core/schedules/instants.ts';
import { scheduleFileErrors, type SchedulingGranularity } from '#functions/core/schedules/schedule-file.ts';
import type { ScheduleFile } from '#functions/core/schedules/schedule-types.ts';
import { nextFires } from '#functions/core/schedules/trigger-engine.ts';

const usage = `Usage: npm run schedule -- <command>

  validate <file...> [--granularity hours|minutes]
      check schedule files (YAML, or JSON when the name ends in .json); Minute triggers need
      --granularity minutes, as they need the tenant's schedulingGranularity. Exit code 1 on any error.
  next <file> [--count N] [--after ISO-instant]
      the next N (default 10, at most 1000) fires after now (or after --after), in UTC and local time`;

class UsageError extends Error {}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    granularity: { type: 'string', default: 'hours' },
    count: { type: 'string', default: '10' },
    after: { type: 'string' },
    help: { type: 'boolean' },
  },
});

/** The file's content, or the one line that says why it cannot be read. */
function readSchedule(path: string): { value?: unknown; problem?: string } {
  try {
    if (statSync(path).size > maxBodyBytes) return { problem: `larger than ${maxBodyBytes} bytes` };
    const text = readFileSync(path, 'utf8');
    return { value: path.endsWith('.json') ? JSON.parse(text) : parseYamlBody(text) };
  } catch (error) {
    return { problem: error instanceof ServiceError || error instanceof SyntaxError ? error.message : String(error) };
  }
}

function validate(paths: string[], granularity: SchedulingGranularity): number {
  if (paths.length === 0) throw new UsageError('validate needs at least one file');
  let failed = 0;
  for (const path of paths) {
    const { value, problem } = readSchedule(path);
    const errors = problem ? [{ pointer: '', message: problem }] : scheduleFileErrors(value, granularity);
    if (errors.length === 0) {
      console.log(`ok      ${path}`);
      continue;
    }
    failed++;
    console.log(`invalid ${path}`);
    for (const error of errors) console.log(`  ${error.pointer || '(file)'} ${error.message}`);
  }
  return failed === 0 ? 0 : 1;
}

function next(paths: string[], countText: string, afterText: string | undefined): number {
  const [path] = paths;
  if (!path || paths.length > 1) throw new UsageError('next needs exactly one file');
  const count = /^\d{1,4}$/.test(countText) ? Number(countText) : Number.NaN;
  if (!(count >= 1 && count <= 1000)) throw new UsageError('--count must be an integer from 1 to 1000');
  const after = afterText === undefined ? Date.now() : Date.parse(afterText);
  if (Number.isNaN(after)) throw new UsageError('--after must be an ISO 8601 instant, e.g. 2027-03-14T00:00:00Z');
  const { value, problem } = readSchedule(path);
  // A preview does not depend on a tenant: Minute triggers are allowed here.
  const errors = problem ? [{ pointer: '', message: problem }] : scheduleFileErrors(value, 'minutes');
  if (errors.length > 0) {
    for (const error of errors) console.error(`${path}: ${error.pointer || '(file)'} ${error.message}`);
    return 1;
  }
  const { body } = value as ScheduleFile;
  if (!body.ativo) console.log('# ativo is false: the service never fires this schedule; the fires below are its triggers');
  for (const instant of nextFires(body.triggers, body.timezone, after, count)) {
    const { utc, local } = instantIn(instant, body.timezone);
    console.log(`${utc}  ${local}`);
  }
  return 0;
}

function main(): number {
  const [command, ...paths] = positionals;
  if (values.help || !command) {
    console.log(usage);
    return values.help ? 0 : 2;
  }
  const granularity = values.granularity;
  if (granularity !== 'hours' && granularity !== 'minutes') throw new UsageError('--granularity must be hours or minutes');
  if (command === 'validate') return validate(paths, granularity);
  if (command === 'next') return next(paths, values.count, values.after);
  throw new UsageError(`Unknown command ${command}`);
}

try {
  process.exitCode = main();
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  console.error(`${error.message}\n\n${usage}`);
  process.exitCode = 2;
}
