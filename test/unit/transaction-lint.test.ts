/**
 * Every transaction outside the store goes through the builder of named items
 * (functions/core/store/transaction.ts): a failure is told by the name of the item that failed,
 * never by its position, so moving or adding an item cannot change which answer a caller gives.
 * The raw helpers (arrays in, failed indexes out) and the SDK's own transaction commands are the
 * store's alone.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { expect, test } from 'vitest';
import { projectRoot } from '#test/support/processes.ts';

/**
 * The store's transaction helper and the builder over it: the only files that see items by position;
 * and the audit record's module, which appends its items after a transaction's own and tells their
 * failures from its own by where they sit (the caller still hears of its items by name).
 */
const storeModule = new Set([
  'functions/core/store/dynamo.ts',
  'functions/core/store/transaction.ts',
  'functions/core/audit/audit-record.ts',
  'functions/core/audit/audit-scope.ts',
]);

/** The raw helpers, the indexes they answer, and the SDK's transaction commands (a transaction around the builder). */
const rawTransaction = new Set([
  'transact',
  'transactOrReasons',
  'failedConditions',
  'TransactWriteCommand',
  'TransactWriteItemsCommand',
]);

/** Where `source` (the file at `path`, relative to the project) names the raw transaction, as `path:line name`. */
function rawTransactionUses(path: string, source: string): string[] {
  if (storeModule.has(path)) return [];
  const file = ts.createSourceFile(path, source, ts.ScriptTarget.Latest, true);
  const uses: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && rawTransaction.has(node.text)) {
      uses.push(`${path}:${file.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${node.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return uses;
}

const sourcesUnder = (folder: string): string[] =>
  readdirSync(join(projectRoot, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.(ts|js|cjs|mjs)$/.test(name))
    .map((name) => join(folder, name));

test('no file under functions/ but the store module sends a raw transaction or reads failed conditions by index', () => {
  const files = sourcesUnder('functions');
  expect(files).toContain('functions/core/directory/directory-repository.ts');
  expect(files.flatMap((path) => rawTransactionUses(path, readFileSync(join(projectRoot, path), 'utf8')))).toEqual([]);
});

test('the check finds a raw helper, the indexes it answers and an SDK transaction, imported or used, in any file but the store module', () => {
  const positional = [
    "import { transactOrReasons } from '#functions/core/store/dynamo.ts';",
    'const outcome = await transactOrReasons(items);',
    'if (!outcome.written && outcome.failedConditions.includes(0)) throw conflict();',
  ].join('\n');
  expect(rawTransactionUses('functions/core/tenants/x-repository.ts', positional)).toEqual([
    'functions/core/tenants/x-repository.ts:1 transactOrReasons',
    'functions/core/tenants/x-repository.ts:2 transactOrReasons',
    'functions/core/tenants/x-repository.ts:3 failedConditions',
  ]);
  expect(rawTransactionUses('functions/core/x.ts', 'await store.transact([item]);\n')).toEqual([
    'functions/core/x.ts:1 transact',
  ]);
  expect(
    rawTransactionUses(
      'functions/core/alerts/x-repository.ts',
      'await db().send(new TransactWriteCommand({ TransactItems: [item] }));\n',
    ),
  ).toEqual(['functions/core/alerts/x-repository.ts:1 TransactWriteCommand']);
  // Words in comments and strings are no use; the builder is what callers use.
  expect(
    rawTransactionUses(
      'functions/core/x.ts',
      "// transactOrReasons retries conflicts\nconst outcome = await transaction<'user'>().add('user', item).commit();\nlog('transact');\n",
    ),
  ).toEqual([]);
  expect(rawTransactionUses('functions/core/store/dynamo.ts', positional)).toEqual([]);
  expect(rawTransactionUses('functions/core/store/transaction.ts', positional)).toEqual([]);
});
