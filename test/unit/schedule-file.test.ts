import { describe, expect, test } from 'vitest';
import { scheduleFileErrors } from '#functions/core/schedules/schedule-file.ts';

/** A valid file with one trigger of each kind; each case below breaks exactly one rule of it. */
function validFile(): Record<string, any> /* eslint-disable-line @typescript-eslint/no-explicit-any -- cases edit any field */ {
  return {
    fileName: 'nightly.yaml',
    header: { id: 12, kind: 'schedule', nome: 'Nightly', description: 'Loads', labels: { team: 'sales' } },
    body: {
      nome: 'Nightly',
      ativo: true,
      timezone: 'Europe/Berlin',
      flows: [{ flow_etl_id: 3, context: 'full', priority: 'extra properties are kept' }],
      triggers: [
        { type: 'Hour', period: 2, start_when: '2026-01-01T00:00', start_time: '08:00', end_time: '18:00' },
        { type: 'Minute', period: 15, start_when: '2026-01-01T00:00:00+01:00', start_time: '22:00', end_time: '02:00' },
        { type: 'Day', start_when: '7:05' },
        { type: 'Week', period: 0, start_when: '23:59' },
        { type: 'Week', period: 6, start_when: '00:00' },
        { type: 'Month', period: 31, start_when: '12:30', note: 'extra' },
      ],
      tags: ['nightly'],
      owner: 'extra body properties are allowed',
    },
  };
}

const errorsOf = (file: unknown, granularity: 'hours' | 'minutes' = 'minutes') => scheduleFileErrors(file, granularity);

describe('schedule file v2', () => {
  test('a file with every trigger kind is valid', () => {
    expect(errorsOf(validFile())).toEqual([]);
  });

  test('read-only fields sent back are accepted (they are ignored on write)', () => {
    const file = validFile();
    Object.assign(file.body, { version: 3, createdAt: '2026-01-01T00:00:00.000Z', createdBy: 'tenant:1' });
    expect(errorsOf(file)).toEqual([]);
  });

  const cases: Array<[string, (file: ReturnType<typeof validFile>) => void, string, string]> = [
    ['an extra root property', (file) => (file.extra = 1), '/extra', 'is not allowed'],
    ['no header', (file) => delete file.header, '/header', 'is required'],
    ['no body', (file) => delete file.body, '/body', 'is required'],
    ['no header id', (file) => delete file.header.id, '/header/id', 'is required'],
    ['a header kind other than schedule', (file) => (file.header.kind = 'report'), '/header/kind', 'must be "schedule"'],
    ['an unknown header property', (file) => (file.header.version = 2), '/header/version', 'is not allowed'],
    [
      'a file name with a path',
      (file) => (file.fileName = '../x.yaml'),
      '/fileName',
      'must be a file name: no path separator, none of : * ? " < > |, no control or invisible format character (bidi controls, zero-width spaces), and not . or ..',
    ],
    ['an empty nome', (file) => (file.body.nome = ''), '/body/nome', 'must not be empty'],
    ['no ativo', (file) => delete file.body.ativo, '/body/ativo', 'is required'],
    ['an empty timezone', (file) => (file.body.timezone = ''), '/body/timezone', 'must not be empty'],
    [
      'an unknown timezone',
      (file) => (file.body.timezone = 'Europe/Atlantis'),
      '/body/timezone',
      'is not a known IANA time zone (e.g. America/Sao_Paulo)',
    ],
    ['no flows', (file) => delete file.body.flows, '/body/flows', 'is required'],
    ['a flow without flow_etl_id', (file) => delete file.body.flows[0].flow_etl_id, '/body/flows/0/flow_etl_id', 'is required'],
    ['a flow without context', (file) => delete file.body.flows[0].context, '/body/flows/0/context', 'is required'],
    [
      'a flow_etl_id that is not an identifier',
      (file) => (file.body.flows[0].flow_etl_id = 0),
      '/body/flows/0/flow_etl_id',
      'must be >= 1',
    ],
    ['no triggers', (file) => delete file.body.triggers, '/body/triggers', 'is required'],
    [
      'an unknown trigger type',
      (file) => (file.body.triggers[2].type = 'Year'),
      '/body/triggers/2/type',
      'must be one of "Hour", "Minute", "Day", "Month", "Week"',
    ],
    ['Hour period 0', (file) => (file.body.triggers[0].period = 0), '/body/triggers/0/period', 'must be >= 1'],
    ['Hour without end_time', (file) => delete file.body.triggers[0].end_time, '/body/triggers/0/end_time', 'is required'],
    [
      'Hour start_when that is not a date-time',
      (file) => (file.body.triggers[0].start_when = '08:00'),
      '/body/triggers/0/start_when',
      'must be an ISO 8601 date-time such as 2027-01-31T08:00 or 2027-01-31T08:00:00Z',
    ],
    [
      'Hour start_when on a day that does not exist',
      (file) => (file.body.triggers[0].start_when = '2026-02-30T00:00'),
      '/body/triggers/0/start_when',
      'is not a date-time that exists',
    ],
    [
      'Minute start_time 24:00',
      (file) => (file.body.triggers[1].start_time = '24:00'),
      '/body/triggers/1/start_time',
      'must be a time HH:MM between 00:00 and 23:59',
    ],
    [
      'Day start_when 24:00',
      (file) => (file.body.triggers[2].start_when = '24:00'),
      '/body/triggers/2/start_when',
      'must be a time HH:MM between 00:00 and 23:59',
    ],
    [
      'Day start_when 7:5',
      (file) => (file.body.triggers[2].start_when = '7:5'),
      '/body/triggers/2/start_when',
      'must be a time HH:MM between 00:00 and 23:59',
    ],
    [
      'Day start_when as a number',
      (file) => (file.body.triggers[2].start_when = 425),
      '/body/triggers/2/start_when',
      'must be string',
    ],
    ['Week period 7', (file) => (file.body.triggers[3].period = 7), '/body/triggers/3/period', 'must be <= 6'],
    ['Week period -1', (file) => (file.body.triggers[4].period = -1), '/body/triggers/4/period', 'must be >= 0'],
    ['Week without period', (file) => delete file.body.triggers[3].period, '/body/triggers/3/period', 'is required'],
    ['Month period 0', (file) => (file.body.triggers[5].period = 0), '/body/triggers/5/period', 'must be >= 1'],
    ['Month period 32', (file) => (file.body.triggers[5].period = 32), '/body/triggers/5/period', 'must be <= 31'],
    ['Month period 1.5', (file) => (file.body.triggers[5].period = 1.5), '/body/triggers/5/period', 'must be integer'],
    [
      'a repeated tag',
      (file) => (file.body.tags = ['a', 'a']),
      '/body/tags',
      'must not repeat an item (items 0 and 1 are equal)',
    ],
  ];

  test.each(cases)('refuses %s, at its pointer and nowhere else', (_name, breakIt, pointer, message) => {
    const file = validFile();
    breakIt(file);
    expect(errorsOf(file)).toEqual([{ location: 'body', pointer, message }]);
  });

  test('refuses a Minute trigger unless the granularity is minutes', () => {
    expect(errorsOf(validFile(), 'hours')).toEqual([
      {
        location: 'body',
        pointer: '/body/triggers/1/type',
        message: "is Minute, which needs the tenant's schedulingGranularity to be minutes",
      },
    ]);
  });

  test('reports every problem of a file at once', () => {
    const file = validFile();
    file.extra = true;
    file.body.nome = '';
    file.body.timezone = 'Nowhere/City';
    file.body.triggers[5].period = 32;
    expect(errorsOf(file, 'hours').map((error) => error.pointer)).toEqual([
      '/extra',
      '/body/nome',
      '/body/triggers/5/period',
      '/body/timezone',
      '/body/triggers/1/type',
    ]);
  });

  test('is not fooled by values of the wrong shape', () => {
    for (const value of [null, 'schedule', [], { header: [], body: 'x' }, { header: { id: 1 }, body: { triggers: [null, 7] } }]) {
      expect(errorsOf(value).length).toBeGreaterThan(0);
    }
  });
});
