/**
 * Every parser bench/parsers.ts measures has a check here, or beside its other tests, that its cost
 * grows linearly with what a caller sends. Tests assert no times: a check counts the work done
 * where the work can be seen (reads of the input, time zone readings), or is the class's example at
 * the largest size the route takes (or past it, where the parser is cheap), where the quadratic
 * version takes seconds (a slow test, not a failing one: there the bench, which measures the same
 * parsers at n and 2n items, is what fails) to hours (the time-out fails it).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { benchedParsers } from '#bench/parsers.ts';
import { httpApiRequestLineAndHeaderBytes } from '#functions/core/aws-limits.ts';
import { maxBodyBytes, parseBody } from '#functions/core/api/request-body.ts';
import { validateBody } from '#functions/core/api/validation.ts';
import createTenantSchema from '#functions/core/api/validators/create-tenant.cjs';
import { parseYamlBody, toYaml } from '#functions/core/api/yaml-body.ts';
import { ServiceError } from '#functions/core/errors.ts';
import { scheduleFileErrors } from '#functions/core/schedules/schedule-file.ts';
import { decodeRef, safeRedirectTarget } from '#functions/core/sso/landing.ts';
import { checkBundle, type TemplateBundle } from '#functions/core/templates/bundle.ts';

const here = 'test/unit/parser-cost.test.ts';

/** Each parser the bench measures (by its row's name): the file and the title of its check. */
const checks: Record<string, [file: string, title: string]> = {
  'JSON body (parse, structure checks, schema)': [here, 'as many distinct keys as a 1 MB body holds'],
  'JSON body refused (n unknown keys: n errors, answer capped)': [
    'test/unit/validation.test.ts',
    'a body with an error per item gets all of them counted',
  ],
  'YAML body (parse, duplicate keys, structure checks)': ['test/unit/request-body.test.ts', 'many distinct keys parse'],
  'schedule file (YAML parse, schema, time rules)': [here, 'the largest schedule file YAML allows'],
  'next fires of a schedule (`/next?count=100`: triggers parsed once, merged)': [
    'test/unit/next-fires-incremental.test.ts',
    'what next fires cost',
  ],
  'template bundle checks (keys, references, cycles)': [here, 'template bundle checks'],
  'flow dependency order (apply, reload)': ['test/unit/flow-order.test.ts', 'ordering cost is linear in reads plus writes'],
  '`ref` of the SSO landing (Base64 decode, resolve)': [here, 'a route of two million segments'],
};

test('every parser the bench measures has a check of its cost', () => {
  expect(Object.keys(checks).sort()).toEqual([...benchedParsers].sort());
  for (const [parser, [file, title]] of Object.entries(checks)) {
    expect(readFileSync(file, 'utf8'), `${parser}: ${file}`).toContain(`('${title}`);
  }
});

/** What `work` throws, or undefined. */
function refusal(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  return undefined;
}

const sent = (body: string, contentType: string) => ({ body, isBase64Encoded: false, headers: { 'content-type': contentType } });

test('as many distinct keys as a 1 MB body holds, in one object: each name checked once, then refused by the schema', () => {
  // Checking each name against the earlier ones of its object (as the YAML library did) is 4.5
  // billion comparisons here: seconds for one request.
  const variables = Object.fromEntries(Array.from({ length: 95_000 }, (_, index) => [`k${index.toString(36)}`, index % 10]));
  const event = sent(JSON.stringify({ nome: 'Acme', ativo: true, development_variables: variables }), 'application/json');
  expect(event.body.length).toBeGreaterThan(0.9 * maxBodyBytes);
  const parsed = parseBody(event) as { development_variables: object };
  expect(Object.keys(parsed.development_variables)).toHaveLength(95_000);
  const refused = refusal(() => validateBody(createTenantSchema, parsed));
  expect(refused).toBeInstanceOf(ServiceError);
  expect((refused as ServiceError).errors.map((error) => error.pointer)).toEqual([
    '/development_variables',
    '/development_variables',
  ]);
});

test('the largest schedule file YAML allows: parsed, refused by the schema once, every trigger read for the time rules', () => {
  // Its parts' costs are checked where they live (the YAML parser in request-body.test.ts, the
  // schema's errors in validation.test.ts); this is the whole route's work at its bound.
  const file = (count: number) =>
    sent(
      toYaml({
        header: { id: 1 },
        body: {
          nome: 'S',
          ativo: true,
          timezone: 'America/Sao_Paulo',
          flows: [{ flow_etl_id: 1, context: 'full' }],
          triggers: Array.from({ length: count }, (_, index) =>
            index % 2 === 0
              ? { type: 'Day', start_when: '08:00' }
              : { type: 'Hour', period: 2, start_when: '2027-01-01T00:00', start_time: '08:00', end_time: '18:00' },
          ),
        },
      }),
      'application/yaml',
    );
  const parsed = parseBody(file(7_000), { yaml: parseYamlBody });
  expect(scheduleFileErrors(parsed, 'hours').map((error) => error.pointer)).toEqual(['/body/triggers']);
  expect(refusal(() => parseBody(file(8_000), { yaml: parseYamlBody }))).toMatchObject({ status: 413 });
});

describe('template bundle checks', () => {
  const table = (key: string) => ({
    key,
    nome: key,
    desk: 'desk',
    columns: [{ column_name: 'id', data_type: 'integer', label: '' }],
  });
  const flow = (key: string, reads: string[], writes: string[]) => ({
    key,
    nome: key,
    connection: 'erp',
    reads,
    writes,
    context: 'full',
  });
  const bundle = (tables: TemplateBundle['tables'], flows: TemplateBundle['flows']): TemplateBundle => ({
    nome: 'Big',
    desks: [{ key: 'desk', nome: 'Desk' }],
    connections: [{ key: 'erp', nome: 'ERP', kind: 'postgres' }],
    tables,
    flows,
  });
  /** n tables and n flows in one chain: each flow reads the table the one before writes. */
  const chain = (n: number) =>
    bundle(
      Array.from({ length: n }, (_, index) => table(`t${index}`)),
      Array.from({ length: n }, (_, index) => flow(`f${index}`, index > 0 ? [`t${index - 1}`] : [], [`t${index}`])),
    );
  /** n tables, each key given twice, and n / 2 flows in cycles of two: flow 2i writes table 2i and reads 2i + 1, flow 2i + 1 the other way round. */
  const tangle = (n: number) =>
    bundle(
      Array.from({ length: n }, (_, index) => table(`t${index >> 1}`)),
      Array.from({ length: n / 2 }, (_, index) => flow(`f${index}`, [`t${index ^ 1}`], [`t${index}`])),
    );

  /** How many properties of the bundle's tables and flows the checks read, per table and flow. */
  function readsPerItem(checked: TemplateBundle): number {
    let reads = 0;
    const counting = <T extends object>(items: readonly T[] = []) =>
      items.map(
        (item) =>
          new Proxy(item, {
            get: (target, property, receiver) => {
              reads++;
              return Reflect.get(target, property, receiver) as unknown;
            },
          }),
      );
    const tables = counting(checked.tables);
    const flows = counting(checked.flows);
    checkBundle({ ...checked, tables, flows });
    return reads / (tables.length + flows.length);
  }

  test('each table and flow is read a few times, however many there are', () => {
    // Looking each reference or key up among the items instead would read them n times each.
    for (const n of [100, 4_000]) {
      expect(readsPerItem(chain(n)), `chain of ${n}`).toBeLessThanOrEqual(12);
      expect(readsPerItem(tangle(n)), `tangle of ${n}`).toBeLessThanOrEqual(12);
    }
  });

  // Far past the schema's 1,000 tables and flows: the checks' own cost, which the bound keeps small.
  test('100,000 tables and flows in one chain of dependencies: nothing to report', () => {
    expect(checkBundle(chain(100_000))).toEqual([]);
  });

  test('100,000 tables, each key twice, and 50,000 flows in cycles of two: an error for each, at its place', () => {
    const errors = checkBundle(tangle(100_000));
    expect(errors.filter((error) => error.pointer.startsWith('/tables/'))).toHaveLength(50_000);
    expect(errors.filter((error) => error.pointer.startsWith('/flows/'))).toHaveLength(25_000);
    expect(errors.at(-1)).toEqual({
      location: 'body',
      pointer: '/flows/49998',
      message: 'flows form a dependency cycle: f49998 → f49999 → f49998',
    });
  });
});

test('a route of two million segments, dot segments and escapes among them, resolves in one pass', () => {
  // A request line holds 10,240 bytes, so the landing never meets a route this long; going back over
  // the path for each of its 800,000 dot segments would take hours.
  const block = '/a/./b/%2e/c/d/../%2E%2E//e';
  const ref = Buffer.from(block.repeat(200_000)).toString('base64url');
  expect(ref.length).toBeGreaterThan(100 * httpApiRequestLineAndHeaderBytes);
  expect(safeRedirectTarget(decodeRef(ref), {})).toBe('/a/b//e'.repeat(200_000));
});
