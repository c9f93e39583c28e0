import { ESLint } from 'eslint';
import { expect, test } from 'vitest';
import { projectRoot } from '../support/processes.ts';

const eslint = new ESLint({ cwd: projectRoot });

/** The no-restricted-imports messages ESLint reports for `source`, linted as if it were the file at `path`. */
async function restrictedImports(path: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: `${projectRoot}${path}` });
  return (result?.messages ?? []).filter((message) => message.ruleId === 'no-restricted-imports').map(({ message }) => message);
}

test('a core module importing a handler, the twin or the stack fails the lint', async () => {
  expect(await restrictedImports('functions/core/tenants/x.ts', "export { handler } from '../../http/get-tenant.ts';\n")).toEqual(
    [expect.stringContaining('must not import a handler')],
  );
  expect(await restrictedImports('functions/core/x.ts', "export { handler } from '../workers/reload-worker.ts';\n")).toEqual([
    expect.stringContaining('must not import a handler'),
  ]);
  expect(await restrictedImports('functions/core/api/x.ts', "export { startTwin } from '../../../local/twin.ts';\n")).toEqual([
    expect.stringContaining('must not import the local twin'),
  ]);
  expect(await restrictedImports('functions/core/api/x.ts', "export * from '../../../lib/service-stack.ts';\n")).toEqual([
    expect.stringContaining('or the stack'),
  ]);
});

test('handlers may import the core, and the core its own modules and the route table', async () => {
  expect(await restrictedImports('functions/http/x.ts', "export { logger } from '../core/observability/logger.ts';\n")).toEqual(
    [],
  );
  expect(await restrictedImports('functions/core/api/x.ts', "export { routes } from '../../routes.ts';\n")).toEqual([]);
  expect(await restrictedImports('functions/core/api/x.ts', "export { logger } from '../observability/logger.ts';\n")).toEqual(
    [],
  );
});
