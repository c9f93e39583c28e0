/**
 * The cost of each parser the API exposes to what a caller sends, at n and 2n items measured in
 * the same run: linear code takes about twice as long for twice the items; a ratio well above 2
 * is a cost that grows faster than the input (the YAML duplicate-key check once made 116k keys
 * take minutes). Every parser runs as its route runs it, with a body of realistic shape.
 */
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { parseBody } from '#functions/core/api/request-body.ts';
import { validateBody } from '#functions/core/api/validation.ts';
import createTenantSchema from '#functions/core/api/validators/create-tenant.cjs';
import templateBundleSchema from '#functions/core/api/validators/template-bundle.cjs';
import { parseYamlBody, toYaml } from '#functions/core/api/yaml-body.ts';
import { errorBody, ServiceError } from '#functions/core/errors.ts';
import { scheduleFileErrors } from '#functions/core/schedules/schedule-file.ts';
import type { Trigger } from '#functions/core/schedules/schedule-types.ts';
import { nextFires } from '#functions/core/schedules/trigger-engine.ts';
import { decodeRef, safeRedirectTarget } from '#functions/core/sso/landing.ts';
import { checkBundle, flowDependencyOrder } from '#functions/core/templates/bundle.ts';

export interface ParserCost {
  parser: string;
  items: string;
  n: number;
  nMs: number;
  twiceNMs: number;
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

/** n tables and n flows, each flow reading the previous flow's table: one long dependency chain. */
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
      columns: [{ column_name: 'id', data_type: 'integer', label: 'Id' }],
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
const route = (n: number) =>
  Array.from({ length: n }, (_, index) => ['/a', '/./b', '/%2e/c', '/d/..', '/%2E%2E', '//e'][index % 6]).join('');

interface Case {
  parser: string;
  items: string;
  n: number;
  /** Builds the input for `n` items (outside the timing), then returns the work to time. */
  prepare: (n: number) => () => void;
}

const cases: Case[] = [
  {
    // Past the schema's 200 variables the body is refused, but every key is still parsed and checked.
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
    parser: 'YAML body (parse, duplicate keys, structure checks)',
    items: 'distinct keys',
    n: 12_000,
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
    // The route's largest count; 2n stays within the schema's 50 triggers.
    parser: 'next fires of a schedule (`/next?count=100`: triggers parsed once, merged)',
    items: 'triggers',
    n: 25,
    prepare: (n) => {
      const triggers = gapTriggers(n);
      const after = Date.parse('2026-11-25T00:00:00Z');
      return () => nextFires(triggers, 'America/New_York', after, 100);
    },
  },
  {
    parser: 'template bundle (JSON parse, schema, keys, references, cycles)',
    items: 'tables and flows',
    // 2n stays within the schema's 1,000 tables, so that both sizes run every check.
    n: 500,
    prepare: (n) => {
      const body = sent(JSON.stringify(bundle(n)), 'application/json');
      return () =>
        answering(() => checkBundle(validateBody(templateBundleSchema, parseBody(body)) as Parameters<typeof checkBundle>[0]));
    },
  },
  {
    // What an apply (its check of the tenant's flows, its plan), a reload and a schedule fire do with
    // the tenant's flows: the ordering once listed every reader-writer pair (4,000 such flows took 57 s).
    parser: 'flow dependency order (apply, reload)',
    items: 'flows (half write, half read 100 tables)',
    n: 2_000,
    prepare: (n) => {
      const flows = denseFlows(n);
      return () => flowDependencyOrder(flows);
    },
  },
  {
    parser: '`ref` of the SSO landing (Base64 decode, resolve)',
    items: 'path segments',
    n: 20_000,
    prepare: (n) => {
      const ref = Buffer.from(route(n)).toString('base64url');
      return () => safeRedirectTarget(decodeRef(ref), { showMenu: '1' });
    },
  },
];

/** Median of a few timed runs after one untimed run (which also compiles the code the runs share). */
function medianMs(work: () => void, runs = 7): number {
  work();
  const times: number[] = [];
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    work();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(runs / 2)] as number;
}

/** Each parser at n and 2n items. */
export function measureParsers(): ParserCost[] {
  return cases.map(({ parser, items, n, prepare }) => {
    const once = prepare(n);
    const twice = prepare(2 * n);
    // Alternated, so that a slow moment of the machine falls on both sizes alike.
    const nRuns: number[] = [];
    const twiceRuns: number[] = [];
    for (let round = 0; round < 3; round++) {
      nRuns.push(medianMs(once));
      twiceRuns.push(medianMs(twice));
    }
    return { parser, items, n, nMs: Math.min(...nRuns), twiceNMs: Math.min(...twiceRuns) };
  });
}
