/**
 * The example receiver's event handling (examples/webhook-receiver/events.mjs) is plain JavaScript,
 * typed with JSDoc from the typed client's `ClientEvent`: it type-checks (checkJs, strict), so a field
 * it reads that an event does not have, or a type it names that none has, fails here.
 */
import { join } from 'node:path';
import ts from 'typescript';
import { expect, test } from 'vitest';
import { projectRoot } from '#test/support/processes.ts';

const options: ts.CompilerOptions = {
  allowJs: true,
  checkJs: true,
  strict: true,
  noEmit: true,
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  allowImportingTsExtensions: true,
  types: [],
  skipLibCheck: true,
};

/** Files parsed once for both checks: the standard library's and the client's declarations are most of the work. */
const parsed = new Map<string, ts.SourceFile | undefined>();

/** The type errors of a file, read from disk unless `source` is given. */
function typeErrors(path: string, source?: string): string[] {
  const file = join(projectRoot, path);
  const host = ts.createCompilerHost(options);
  const { getSourceFile } = host;
  host.getSourceFile = (name, version, ...rest) => {
    if (name === file) return getSourceFile(name, version, ...rest);
    if (!parsed.has(name)) parsed.set(name, getSourceFile(name, version, ...rest));
    return parsed.get(name);
  };
  if (source !== undefined) {
    const { readFile, fileExists } = host;
    host.readFile = (name) => (name === file ? source : readFile(name));
    host.fileExists = (name) => name === file || fileExists(name);
  }
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

test('the example receiver reads every event as the API describes it', () => {
  expect(typeErrors('examples/webhook-receiver/events.mjs')).toEqual([]);
});

test('a misread field fails the check (the check sees the types)', () => {
  const misread =
    "// @ts-check\n/** @param {import('../../client/src/index.ts').ClientEventOf<'run.failed'>} event */\n" +
    'export const runOf = (event) => event.data.runid;\n';
  expect(typeErrors('examples/webhook-receiver/misread.mjs', misread).join('\n')).toMatch(/runid/);
});
