/**
 * The connected files share their worker's modules (vitest.config.ts): a file that changes process or
 * module state would change it for the files after it in the same worker. Such a file belongs in
 * `connected-isolated`, listed in test/support/test-projects.ts; this lint keeps the list exact.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { projectRoot } from '#test/support/processes.ts';
import { connectedFolders, connectedStateful, needsTheTwin } from '#test/support/test-projects.ts';

/** What changes a worker's state for the files after it: environment writes, spies, mocks, fake timers. */
const stateChanges = [
  /process\.env(?:\.\w+|\[[^\]]+\])\s*(?:\?\?|\|\|)?=(?!=)/,
  /delete\s+process\.env/,
  /process\.env\s*=(?!=)/,
  /Object\.assign\(\s*process\.env/,
  /\bvi\.(?:spyOn|mock|doMock|stubEnv|stubGlobal|useFakeTimers)\(/,
];
const changesState = (source: string) => stateChanges.some((pattern) => pattern.test(source));

/** The connected project's files, as vitest.config.ts includes them. */
const connectedFiles = [
  ...connectedFolders.flatMap((folder) =>
    readdirSync(join(projectRoot, folder), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.test.ts'))
      .map((name) => `${folder}/${name}`),
  ),
  needsTheTwin,
];
const source = (file: string) => readFileSync(join(projectRoot, file), 'utf8');

test('every connected file that changes process or module state runs in a process of its own', () => {
  expect(connectedFiles.length).toBeGreaterThan(80);
  const unlisted = connectedFiles.filter((file) => changesState(source(file)) && !connectedStateful.includes(file));
  expect(unlisted, 'add them to test/support/test-projects.ts').toEqual([]);
});

test('every file listed as changing state does (else it can share its worker)', () => {
  expect(connectedStateful.filter((file) => !connectedFiles.includes(file) || !changesState(source(file)))).toEqual([]);
});

test('the lint sees each way of changing state, and not reading it', () => {
  for (const changing of [
    'process.env.TABLE_NAME = name;',
    "process.env[queueUrlVariable('fire')] = url;",
    'process.env.POWERTOOLS_LOG_LEVEL ||= "WARN";',
    'delete process.env.UNSIGNED_TOKENS;',
    'process.env = saved;',
    'Object.assign(process.env, { A: "1" });',
    "vi.spyOn(console, 'log');",
    'vi.useFakeTimers();',
  ])
    expect(changesState(changing), changing).toBe(true);
  for (const reading of [
    'const table = process.env.TABLE_NAME;',
    "if (process.env.FUZZ_SEED === 'random') {}",
    'spawn(cmd, { env: { ...process.env, PORT: "0" } });',
  ])
    expect(changesState(reading), reading).toBe(false);
});
