import { ESLint } from 'eslint';
import { expect, test } from 'vitest';
import { projectRoot } from '#test/support/processes.ts';

const eslint = new ESLint({ cwd: projectRoot });

/** The rules that restrict what a module imports, statically or with `import()`. */
const importRules = new Set(['no-restricted-imports', '@typescript-eslint/no-restricted-imports', 'no-restricted-syntax']);

/** The import-restriction messages ESLint reports for `source`, linted as if it were the file at `path`. */
async function restrictedImports(path: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(source, { filePath: `${projectRoot}${path}` });
  return (result?.messages ?? []).filter((message) => importRules.has(message.ruleId ?? '')).map(({ message }) => message);
}

test('a core module importing a handler, the twin or the stack fails the lint', async () => {
  expect(
    await restrictedImports('functions/core/tenants/x.ts', "export { handler } from '#functions/http/get-tenant.ts';\n"),
  ).toEqual([expect.stringContaining('must not import a handler')]);
  expect(
    await restrictedImports('functions/core/x.ts', "export { handler } from '#functions/workers/reload-worker.ts';\n"),
  ).toEqual([expect.stringContaining('must not import a handler')]);
  expect(await restrictedImports('functions/core/api/x.ts', "export { startTwin } from '#local/twin.ts';\n")).toEqual([
    expect.stringContaining('must not import the local twin'),
  ]);
  expect(await restrictedImports('functions/core/api/x.ts', "export * from '#lib/service-stack.ts';\n")).toEqual([
    expect.stringContaining('or the stack'),
  ]);
  // The same by relative path.
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

test('nor the scripts, tools, benchmarks or tests, nor any of these through import()', async () => {
  for (const folder of ['bin', 'tools', 'bench', 'test']) {
    expect(await restrictedImports('functions/core/api/x.ts', `export * from '#${folder}/x.ts';\n`), folder).toEqual([
      expect.stringContaining('must not import the scripts, tools, benchmarks or tests'),
    ]);
    expect(await restrictedImports('functions/core/api/x.ts', `export * from '../../../${folder}/x.ts';\n`), folder).toEqual([
      expect.stringContaining('must not import the scripts, tools, benchmarks or tests'),
    ]);
  }
  expect(await restrictedImports('functions/core/api/x.ts', "export const twin = await import('#local/twin.ts');\n")).toEqual([
    expect.stringContaining('must not import the local twin'),
  ]);
  expect(
    await restrictedImports('functions/core/x.ts', "export const worker = await import('../workers/reload-worker.ts');\n"),
  ).toEqual([expect.stringContaining('must not import a handler')]);
  expect(await restrictedImports('functions/core/x.ts', "export const store = await import('./store/dynamo.ts');\n")).toEqual([]);
});

test('handlers may import the core, and the core its own modules and the route table', async () => {
  expect(await restrictedImports('functions/http/x.ts', "export { logger } from '../core/observability/logger.ts';\n")).toEqual(
    [],
  );
  expect(await restrictedImports('functions/core/api/x.ts', "export { routes } from '../../routes.ts';\n")).toEqual([]);
  expect(await restrictedImports('functions/core/api/x.ts', "export { routes } from '#functions/routes.ts';\n")).toEqual([]);
  expect(await restrictedImports('functions/core/api/x.ts', "export { db } from '#functions/core/store/dynamo.ts';\n")).toEqual(
    [],
  );
  expect(await restrictedImports('functions/core/api/x.ts', "export { logger } from '../observability/logger.ts';\n")).toEqual(
    [],
  );
});

test('only store/ and the *-repository.ts modules of functions/core/ import the DynamoDB SDK', async () => {
  expect(await restrictedImports('functions/core/alerts/x.ts', "export { GetCommand } from '@aws-sdk/lib-dynamodb';\n")).toEqual([
    expect.stringContaining('reaches DynamoDB through store/'),
  ]);
  expect(
    await restrictedImports(
      'functions/core/reload/x.ts',
      "export { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';\n",
    ),
  ).toEqual([expect.stringContaining('reaches DynamoDB through store/')]);
  // Nor its other packages, nor a file inside one.
  for (const name of ['@aws-sdk/util-dynamodb', '@aws-sdk/lib-dynamodb/dist-cjs/index.js']) {
    expect(await restrictedImports('functions/core/alerts/x.ts', `export * from '${name}';\n`), name).toEqual([
      expect.stringContaining('reaches DynamoDB through store/'),
    ]);
  }
  expect(
    await restrictedImports('functions/core/alerts/alert-repository.ts', "export { GetCommand } from '@aws-sdk/lib-dynamodb';\n"),
  ).toEqual([]);
  expect(await restrictedImports('functions/core/store/x.ts', "export { GetCommand } from '@aws-sdk/lib-dynamodb';\n")).toEqual(
    [],
  );
  // The repository exception lifts only the SDK restriction: a repository still may not import a handler.
  expect(
    await restrictedImports('functions/core/alerts/alert-repository.ts', "export { handler } from '../../http/get-alert.ts';\n"),
  ).toEqual([expect.stringContaining('must not import a handler')]);
  // A domain file breaking both rules hears of both.
  expect(
    await restrictedImports(
      'functions/core/alerts/x.ts',
      "export { GetCommand } from '@aws-sdk/lib-dynamodb';\nexport { handler } from '../../http/get-alert.ts';\n",
    ),
  ).toEqual([expect.stringContaining('reaches DynamoDB through store/'), expect.stringContaining('must not import a handler')]);
});
