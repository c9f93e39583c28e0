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

test('the read-write grant covers every DynamoDB action the functions use; a Scan is never used', () => {
  const code = sourceFiles(join(projectRoot, 'functions'))
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');
  const used = new Set<string>();
  for (const [command, action] of Object.entries(actionOf)) if (code.includes(`new ${command}(`)) used.add(action);
  if (code.includes('new TransactWriteCommand(')) {
    for (const [part, action] of Object.entries(transactionParts)) if (new RegExp(`\\b${part}`).test(code)) used.add(action);
  }
  expect(used.size).toBeGreaterThan(4);
  expect([...used].filter((action) => !tableActions.readWrite.includes(action))).toEqual([]);
  expect(code).not.toMatch(/new Scan(Command)?\(/);
});
