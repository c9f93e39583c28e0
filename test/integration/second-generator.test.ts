/**
 * A second generator types the document as openapi-typescript does (client/src/schema.ts, checked by
 * test/types/client.ts): @hey-api/openapi-ts makes its types of docs/openapi.json here, and a program
 * compiled against them must narrow a block and a trigger by their tag and refuse the wrong shapes; and
 * nothing it generates is `unknown` but the success envelope's generic `data` (each route's answer gives
 * it its type) and the OpenAPI document itself.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { projectRoot } from '#test/support/processes.ts';

const run = promisify(execFile);
const output = mkdtempSync(join(tmpdir(), 'second-generator-'));
afterAll(() => rmSync(output, { recursive: true, force: true }));

/** Compiles only if the generated types are tagged unions with their per-tag shapes. */
const checks = `
import type { Alert, AlertWebhook, CreateAlert, JwkSet, ScheduleV2 } from './generated/types.gen';

type Block = AlertWebhook['content'][number];
export const contentOf = (block: Block): string => {
  switch (block.type) {
    case 'text':
    case 'ai':
      return block.generated.text;
    case 'report':
      return block.generated.pdf ?? block.generated.xlsx ?? '';
    case 'chart':
      return 'kind' in block.generated ? block.generated.kind : block.generated.chart;
  }
};
type Trigger = ScheduleV2['body']['triggers'][number];
export const periodOf = (trigger: Trigger): number => {
  switch (trigger.type) {
    case 'Hour':
    case 'Minute':
    case 'Month':
    case 'Week':
      return trigger.period;
    case 'Day':
      return 1;
  }
};
export const day: Trigger = { type: 'Day', start_when: '08:00' };
// @ts-expect-error a Month trigger needs its day of the month
export const month: Trigger = { type: 'Month', start_when: '08:00' };
// @ts-expect-error a text block's content is its text
export const wrong: CreateAlert['content'][number] = { type: 'text', nome: 'x', generated: { pdf: 'https://a.example/b' } };
export const stored: Alert['content'][number] = { type: 'report', nome: 'Report' };
export const key: JwkSet['keys'][number]['kty'] = 'EC';
`;

let generated: string;
beforeAll(async () => {
  await run(
    process.execPath,
    [
      join(projectRoot, 'node_modules/@hey-api/openapi-ts/bin/run.js'),
      '-i',
      join(projectRoot, 'docs/openapi.json'),
      '-o',
      join(output, 'generated'),
      '-p',
      '@hey-api/typescript',
    ],
    { cwd: projectRoot },
  );
  generated = readFileSync(join(output, 'generated/types.gen.ts'), 'utf8');
}, 60_000);

test('its types narrow blocks and triggers by their tag, and refuse the wrong shapes', async () => {
  writeFileSync(join(output, 'checks.ts'), checks);
  const tsc = join(projectRoot, 'node_modules/typescript/bin/tsc');
  const options = ['--noEmit', '--strict', '--exactOptionalPropertyTypes', '--target', 'ES2022', '--module', 'NodeNext'];
  const compiled = await run(process.execPath, [tsc, ...options, join(output, 'checks.ts')]).catch(
    (error: { stdout: string }) => error,
  );
  expect(compiled.stdout).toBe('');
}, 60_000);

test('nothing it generates is unknown but the envelope’s generic data and the OpenAPI document', () => {
  const declarations = generated.split(/\n(?=export type )/);
  const withUnknown = declarations.flatMap((declaration) => {
    const code = declaration
      .split('\n')
      .filter((line) => !/^\s*(\/\*\*|\*)/.test(line))
      .join('\n')
      .replaceAll(/'[^']*'/g, "''");
    return /\bunknown\b/.test(code) ? [/^export type (\w+)/.exec(declaration)?.[1] ?? declaration.slice(0, 80)] : [];
  });
  expect(withUnknown.sort()).toEqual(['OpenapiDocument', 'SuccessEnvelope']);
});
