import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { tableActions } from '#lib/function-roles.ts';
import { projectRoot } from '#test/support/processes.ts';

/** The IAM action each DynamoDB command class needs (document-client names and low-level ones alike). */
const actionOf: Record<string, string> = {
  GetCommand: 'dynamodb:GetItem',
  BatchGetCommand: 'dynamodb:BatchGetItem',
  QueryCommand: 'dynamodb:Query',
  PutCommand: 'dynamodb:PutItem',
  UpdateCommand: 'dynamodb:UpdateItem',
  DeleteCommand: 'dynamodb:DeleteItem',
  BatchWriteCommand: 'dynamodb:BatchWriteItem',
};
/** Transactions are authorized per item action; a ConditionCheck needs its own. */
const transactionParts: Record<string, string> = {
  'ConditionCheck:': 'dynamodb:ConditionCheckItem',
  'Put:': 'dynamodb:PutItem',
  'Update:': 'dynamodb:UpdateItem',
  'Delete:': 'dynamodb:DeleteItem',
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

/**
 * A Scan reads every tenant's items: only the stored data migration runner does (at deploy and when the twin starts),
 * page by page; on AWS its role alone may (lib/stored-data-migration.ts, test/infra/stored-data-migration.test.ts).
 */
const scanningFile = join(projectRoot, 'functions', 'core', 'store', 'migrations.ts');

test('the read-write grant covers every DynamoDB action the functions use; only the migration runner scans', () => {
  const sources = sourceFiles(join(projectRoot, 'functions')).map((file) => ({ file, text: readFileSync(file, 'utf8') }));
  const code = sources.map(({ text }) => text).join('\n');
  const used = new Set<string>();
  for (const [command, action] of Object.entries(actionOf)) if (code.includes(`new ${command}(`)) used.add(action);
  if (code.includes('new TransactWriteCommand(')) {
    for (const [part, action] of Object.entries(transactionParts)) if (new RegExp(`\\b${part}`).test(code)) used.add(action);
  }
  expect(used.size).toBeGreaterThan(4);
  expect([...used].filter((action) => !tableActions.readWrite.includes(action))).toEqual([]);
  expect(sources.filter(({ text }) => /new Scan(Command)?\(/.test(text)).map(({ file }) => file)).toEqual([scanningFile]);
});
