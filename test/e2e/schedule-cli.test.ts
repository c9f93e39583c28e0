import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { runToEnd } from '#test/support/processes.ts';

const scratch = mkdtempSync(join(tmpdir(), 'schedule-cli-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

test('validate: exit 0 for good files, 1 with every error by pointer for a bad one', async () => {
  const good = await runToEnd('bin/schedule.ts', ['validate', 'examples/schedules/nightly.yaml']);
  expect(good).toMatchObject({ code: 0 });
  expect(good.output).toContain('ok      examples/schedules/nightly.yaml');

  const bad = join(scratch, 'bad.json');
  writeFileSync(
    bad,
    JSON.stringify({ header: { id: 1 }, body: { nome: '', ativo: true, timezone: 'X/Y', flows: [], triggers: [] } }),
  );
  const refused = await runToEnd('bin/schedule.ts', ['validate', 'examples/schedules/nightly.yaml', bad]);
  expect(refused.code).toBe(1);
  expect(refused.output).toContain(
    `invalid ${bad}\n  /body/nome must not be empty\n  /body/timezone is not a known IANA time zone`,
  );

  const minute = await runToEnd('bin/schedule.ts', ['validate', 'examples/schedules/every-minute.yaml']);
  expect(minute.code).toBe(1);
  expect(minute.output).toContain("/body/triggers/0/type is Minute, which needs the tenant's schedulingGranularity");
  expect(
    (await runToEnd('bin/schedule.ts', ['validate', 'examples/schedules/every-minute.yaml', '--granularity', 'minutes'])).code,
  ).toBe(0);

  const notYaml = join(scratch, 'tags.yaml');
  writeFileSync(notYaml, 'header: !!js/function "x"\n');
  const tagged = await runToEnd('bin/schedule.ts', ['validate', notYaml]);
  expect(tagged.code).toBe(1);
  expect(tagged.output).toMatch(/\(file\) Request body is not valid YAML/);
});

test('next: the next N fires in UTC and local time', async () => {
  const next = await runToEnd('bin/schedule.ts', [
    'next',
    'examples/schedules/nightly.yaml',
    '--count',
    '3',
    '--after',
    '2027-01-31T00:00:00Z',
  ]);
  expect(next.code).toBe(0);
  expect(next.output.trim().split('\n')).toEqual([
    '2027-01-31T09:30:00.000Z  2027-01-31T06:30:00-03:00',
    '2027-01-31T11:00:00.000Z  2027-01-31T08:00:00-03:00',
    '2027-01-31T13:00:00.000Z  2027-01-31T10:00:00-03:00',
  ]);
  expect((await runToEnd('bin/schedule.ts', ['next', 'examples/schedules/nightly.yaml', '--count', '0'])).code).toBe(2);
});
