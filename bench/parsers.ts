/**
 * The cost of each parser the API exposes to what a caller sends, at n and 2n items measured in
 * the same run: linear code takes about twice as long for twice the items; a ratio well above 2
 * is a cost that grows faster than the input (the YAML duplicate-key check once made 116k keys
 * take minutes). Every parser runs as its route runs it, with a body of realistic shape, at an n
 * that takes at least 100 ms: at a few milliseconds a collection, a JIT tier or the timer's
 * resolution moves the ratio by more than the budget allows (a full run once failed three parsers
 * measured at 0.5 to 5 ms). Where the route's bounds keep every input smaller than that, the row
 * measures the parser's own function on a larger input, and says so.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { httpApiRequestLineAndHeaderBytes } from '#functions/core/aws-limits.ts';
import { parseBody } from '#functions/core/api/request-body.ts';
import { validateBody } from '#functions/core/api/validation.ts';
import createTenantSchema from '#functions/core/api/validators/create-tenant.cjs';
import { parseYamlBody, toYaml } from '#functions/core/api/yaml-body.ts';
import { errorBody, ServiceError } from '#functions/core/errors.ts';
import { scheduleFileErrors } from '#functions/core/schedules/schedule-file.ts';
import type { Trigger } from '#functions/core/schedules/schedule-types.ts';
import { nextFires } from '#functions/core/schedules/trigger-engine.ts';
import { decodeRef, safeRedirectTarget } from '#functions/core/sso/landing.ts';
import { tenantLimits } from '#functions/core/templates/apply-check.ts';
import { checkBundle, flowDependencyOrder } from '#functions/core/templates/bundle.ts';

export interface ParserCost {
  parser: string;
  items: string;
  n: number;
  /** Set when 2n is past what the route takes: the bound, and which function alone is measured. */
  beyondRoute?: string;
  /** CPU time of one run at n and at 2n: the median over the repeats. */
  nMs: number;
  twiceNMs: number;
  /** The time at 2n over the time at n, each repeat's: their median and their spread. */
  ratio: number;
  lowestRatio: number;
  highestRatio: number;
}

/** A ratio of the time for 2n items to the time for n at most this is linear enough. */
export const parserBudgetRatio = 2.5;

type Event = Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded' | 'headers'>;
const sent = (body: string, contentType: string): Event => ({
  body,
  isBase64Encoded: false,
  headers: { 'content-type': contentType },
});

/** Runs what a route does with the body, catching the 400 a refused body gets (its answer built, as the route builds it). */
function answering(work: () => unknown): void {
  try {
    work();
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    JSON.stringify(errorBody(error.code, error.message, 'bench', error.errors));
  }
}

const manyKeys = (n: number) =>
  Object.fromEntries(Array.from({ length: n }, (_, index) => [`k${index.toString(36)}`, index % 10]));

function schedule(triggers: number) {
  return {
    header: { id: 1 },
    body: {
      nome: 'Bench',
      ativo: true,
      timezone: 'America/Sao_Paulo',
      flows: [{ flow_etl_id: 1, context: 'full' }],
      triggers: Array.from({ length: triggers }, (_, index) =>
        index % 2 === 0
          ? { type: 'Day', start_when: '08:00' }
          : { type: 'Hour', period: 2, start_when: '2027-01-01T00:00', start_time: '08:00', end_time: '18:00' },
      ),
    },
  };
}

/**
 * n distinct Hour triggers whose start_when falls in the America/New_York gap of 2027-03-14 (the clock
 * skips 02:00-02:59): what made GET /tenant/schedules/{id}/next cost seconds when each fire re-parsed
 * and re-scanned every trigger.
 */
const gapTriggers = (n: number): Trigger[] =>
  Array.from({ length: n }, (_, index) => {
    const minute = String(index % 60).padStart(2, '0');
    return {
      type: 'Hour',
      period: 1 + Math.floor(index / 60),
      start_when: `2027-03-14T02:${minute}`,
      start_time: `00:${minute}`,
      end_time: '23:59',
    };
  });

/**
 * n tables of 50 columns and n flows, each flow reading the previous flow's table: one long
 * dependency chain. Columns as tables have them, rather than more tables, make up most of the 100 ms:
 * from some 50,000 keys on, a Map of the keys alone takes 2.3 to 2.8 times as long for twice the keys
 * on this machine (the processor's caches), which would hide what the checks' own code adds.
 */
function bundle(n: number) {
  const key = (kind: string, index: number) => `${kind}-${index}`;
  return {
    nome: 'Bench',
    desks: [{ key: 'desk', nome: 'Desk' }],
    connections: [{ key: 'erp', nome: 'ERP', kind: 'postgres' }],
    tables: Array.from({ length: n }, (_, index) => ({
      key: key('table', index),
      nome: `Table ${index}`,
      desk: 'desk',
      columns: Array.from({ length: 50 }, (_, column) => ({
        column_name: `c${column}`,
        data_type: 'integer',
        label: `Column ${column}`,
      })),
    })),
    flows: Array.from({ length: n }, (_, index) => ({
      key: key('flow', index),
      nome: `Flow ${index}`,
      connection: 'erp',
      ...(index > 0 ? { reads: [key('table', index - 1)] } : {}),
      writes: [key('table', index)],
      context: 'full',
    })),
  };
}

/**
 * n flows as a tenant gathers them from several templates: half each write the same 100 tables, half
 * each read them, so every reader depends on every writer (n² / 4 pairs, 100 tables each).
 */
function denseFlows(n: number) {
  const tables = Array.from({ length: 100 }, (_, index) => `t${index}`);
  return Array.from({ length: n }, (_, index) =>
    index % 2 === 0 ? { key: `w${index}`, writes: tables } : { key: `r${index}`, reads: tables, writes: [`out${index}`] },
  );
}

/** A route of n segments, half of them dot segments and escapes that resolving must work through. */
const segments = ['/a', '/./b', '/%2e/c', '/d/..', '/%2E%2E', '//e'];
const route = (n: number) =>
  segments.join('').repeat(Math.floor(n / segments.length)) + segments.slice(0, n % segments.length).join('');

interface Case {
  parser: string;
  items: string;
  /** Chosen so that n takes at least 100 ms on the machine the report was made on. */
  n: number;
  /** As in `ParserCost`. */
  beyondRoute?: string;
  /** Builds the input for `n` items (outside the timing), then returns the work to time. */
  prepare: (n: number) => () => void;
}

const cases: Case[] = [
  {
    // Past the schema's 200 variables the body is refused, but every key is still parsed and checked.
    // 2n is about as many keys as the 1 MB body holds, so n takes less than 100 ms (some 70 ms here).
    parser: 'JSON body (parse, structure checks, schema)',
    items: 'distinct keys',
    n: 50_000,
    prepare: (n) => {
      const body = sent(JSON.stringify({ nome: 'Acme', ativo: true, development_variables: manyKeys(n) }), 'application/json');
      return () => answering(() => validateBody(createTenantSchema, parseBody(body)));
    },
  },
  {
    parser: 'JSON body refused (n unknown keys: n errors, answer capped)',
    items: 'unknown keys',
    n: 50_000,
    prepare: (n) => {
      const body = sent(JSON.stringify({ nome: 'Acme', ativo: true, ...manyKeys(n) }), 'application/json');
      return () => answering(() => validateBody(createTenantSchema, parseBody(body)));
    },
  },
  {
    // 2n within the token bound (maxYamlTokens), so that both sizes are parsed to the end.
    parser: 'YAML body (parse, duplicate keys, structure checks)',
    items: 'distinct keys',
    n: 13_000,
    prepare: (n) => {
      const body = sent(toYaml(manyKeys(n)), 'application/yaml');
      return () => answering(() => parseBody(body, { yaml: parseYamlBody }));
    },
  },
  {
    parser: 'schedule file (YAML parse, schema, time rules)',
    items: 'triggers',
    n: 2_500,
    prepare: (n) => {
      const body = sent(toYaml(schedule(n)), 'application/yaml');
      return () => answering(() => scheduleFileErrors(parseBody(body, { yaml: parseYamlBody }), 'hours'));
    },
  },
  {
    parser: 'next fires of a schedule (`/next?count=100`: triggers parsed once, merged)',
    items: 'triggers',
    n: 600,
    beyondRoute: 'the schema takes 50 triggers (a few ms): nextFires alone',
    prepare: (n) => {
      const triggers = gapTriggers(n);
      const after = Date.parse('2026-11-25T00:00:00Z');
      return () => nextFires(triggers, 'America/New_York', after, 100);
    },
  },
  {
    parser: 'template bundle checks (keys, references, cycles)',
    items: 'tables (50 columns each) and flows',
    n: 25_000,
    beyondRoute:
      'the schema takes 1,000 tables and flows, the body 1 MB (a few ms with the JSON parse and schema): checkBundle alone',
    prepare: (n) => {
      const checked = bundle(n) as Parameters<typeof checkBundle>[0];
      return () => checkBundle(checked);
    },
  },
  {
    // What an apply (its check of the tenant's flows, its plan), a reload and a schedule fire do with
    // the tenant's flows: the ordering once listed every reader-writer pair (4,000 such flows took 57 s).
    parser: 'flow dependency order (apply, reload)',
    items: 'flows (half write, half read 100 tables)',
    n: 30_000,
    beyondRoute: `a tenant holds ${tenantLimits.flows.toLocaleString('en')} flows at most: flowDependencyOrder alone`,
    prepare: (n) => {
      const flows = denseFlows(n);
      return () => flowDependencyOrder(flows);
    },
  },
  {
    parser: '`ref` of the SSO landing (Base64 decode, resolve)',
    items: 'path segments',
    n: 3_000_000,
    beyondRoute: `a request line and its headers hold ${httpApiRequestLineAndHeaderBytes.toLocaleString('en')} bytes: decodeRef and safeRedirectTarget alone`,
    prepare: (n) => {
      const ref = Buffer.from(route(n)).toString('base64url');
      return () => safeRedirectTarget(decodeRef(ref), { showMenu: '1' });
    },
  },
];

/** The parsers measured, by the names the table gives them (test/unit/parser-cost.test.ts finds each one's check of its cost). */
export const benchedParsers = cases.map(({ parser }) => parser);

/** How many times n and 2n are compared: the table shows the median of their ratios and the spread. */
export const parserRepeats = 7;
/** Timed runs of one size in a row, after an untimed one; a repeat compares the two sizes' least times. */
export const parserRunsPerRepeat = 4;

const median = (values: readonly number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/**
 * The CPU time of one run, in ms: the process's user and system time, garbage collector threads
 * included. Unlike the wall clock it leaves out the moments another process holds the core (tests
 * run beside the bench on a shared machine).
 */
function cpuMs(work: () => void): number {
  const started = process.cpuUsage();
  work();
  const { user, system } = process.cpuUsage(started);
  return (user + system) / 1000;
}

/**
 * The least CPU time of runs of one size in a row, after an untimed one: the heap settles at the
 * size's own needs first, so no run pays for growing it or for the other size's garbage (alternating
 * single runs, or collecting before each, made the collector's work, not the parser's, most of the
 * difference between the sizes); the least, because what else the machine does only ever adds.
 */
function blockMs(work: () => void): number {
  work();
  return Math.min(...Array.from({ length: parserRunsPerRepeat }, () => cpuMs(work)));
}

/** Each parser at n and 2n items, `parserRepeats` times. */
export function measureParsers(progress: (message: string) => void = () => {}): ParserCost[] {
  return cases.map(({ parser, items, n, beyondRoute, prepare }) => {
    progress(`  ${parser}: ${n.toLocaleString('en')} and ${(2 * n).toLocaleString('en')} ${items}...`);
    const once = prepare(n);
    const twice = prepare(2 * n);
    // Untimed, so that the code both sizes share is compiled (it takes a few runs) before either is measured.
    blockMs(once);
    blockMs(twice);
    // The sizes take turns, so that a slow moment of the machine falls on both alike.
    const repeats = Array.from({ length: parserRepeats }, () => ({ nMs: blockMs(once), twiceNMs: blockMs(twice) }));
    const ratios = repeats.map((repeat) => repeat.twiceNMs / repeat.nMs);
    return {
      parser,
      items,
      n,
      ...(beyondRoute === undefined ? {} : { beyondRoute }),
      nMs: median(repeats.map((repeat) => repeat.nMs)),
      twiceNMs: median(repeats.map((repeat) => repeat.twiceNMs)),
      ratio: median(ratios),
      lowestRatio: Math.min(...ratios),
      highestRatio: Math.max(...ratios),
    };
  });
}
