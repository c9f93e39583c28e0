/**
 * For the migrations' tests (functions/core/store/migrations.ts): what a migration selects in a
 * partition, the migration run over what it selects there, and a migration stopped at each of its
 * writes; and a Scan of a test's own table.
 */
import { QueryCommand, type QueryCommandInput, ScanCommand, type ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import { expect } from 'vitest';
import { db, tableName } from '#functions/core/store/dynamo.ts';
import { type Condition, keyPrefixesOf, type Migration } from '#functions/core/store/migrations.ts';
import { InjectedFault, inParallel, newTrace, traced } from './faults.ts';

type Item = Record<string, unknown>;

/** Every item of a Query or Scan, page after page, consistently. */
async function allPages(input: Omit<QueryCommandInput & ScanCommandInput, 'TableName'>, query: boolean): Promise<Item[]> {
  const found: Item[] = [];
  let cursor: Item | undefined;
  do {
    const request = { ...input, TableName: tableName(), ConsistentRead: true, ExclusiveStartKey: cursor };
    const page = await db().send(query ? new QueryCommand(request) : new ScanCommand(request));
    found.push(...(page.Items ?? []));
    cursor = page.LastEvaluatedKey;
  } while (cursor);
  return found;
}

const bySortKey = (items: Item[]) => items.sort((a, b) => String(a.sk).localeCompare(String(b.sk)));

/** Every item of the table `filter` selects, in sort key order (for a table of the test's own: a Scan reads it all). */
export async function scanAll(filter: Condition): Promise<Item[]> {
  const { expression, names, values } = filter;
  return bySortKey(
    await allPages({ FilterExpression: expression, ExpressionAttributeNames: names, ExpressionAttributeValues: values }, false),
  );
}

/**
 * The items of the partition `partition` that `migration` selects (store/migrations.ts `Selection`),
 * in sort key order: a Query of the partition per selection whose entity lives there, its sort key
 * prefix for the key condition and its condition for the filter. The runner's Scan of the whole
 * table selects the same (test/integration/migration-runner.test.ts), and scans stay out of tests
 * that share the table with every other.
 */
export async function selectedBy(migration: Migration, partition: string): Promise<Item[]> {
  const found: Item[] = [];
  for (const selection of migration.selects) {
    const prefixes = keyPrefixesOf(selection);
    if (!partition.startsWith(prefixes.pk)) continue;
    const { where } = selection;
    found.push(
      ...(await allPages(
        {
          KeyConditionExpression: 'pk = :partition AND begins_with(sk, :prefix)',
          FilterExpression: where?.expression,
          ExpressionAttributeNames: where?.names,
          ExpressionAttributeValues: { ...where?.values, ':partition': partition, ':prefix': prefixes.sk },
        },
        true,
      )),
    );
  }
  return bySortKey(found);
}

/** Migrates what `migration` selects in `partitions`, as its runner would; answers how many items it was handed. */
export async function migrateWithin(migration: Migration, partitions: readonly string[]): Promise<number> {
  let handed = 0;
  for (const partition of partitions) {
    for (const item of await selectedBy(migration, partition)) {
      handed += 1;
      await migration.migrate(item);
    }
  }
  return handed;
}

/**
 * A migration stopped after each write of a clean run (faults.ts `kill`), then run again: `prepare`
 * makes a fresh case in the old shape, `run` hands the migration what its Scan would (the same
 * items again on the second run: the page a resumed runner goes over again), and `check` asserts
 * what a clean run leaves (`after` names the run, for the failure's message). Answers the clean
 * run's count of writes.
 */
export async function stoppedAfterEachWrite<Case>(options: {
  prepare: () => Promise<Case>;
  run: (each: Case) => Promise<void>;
  check: (each: Case, after: string) => Promise<void>;
  /** Cases run at once (each has data of its own). */
  width?: number;
}): Promise<number> {
  const { prepare, run, check } = options;
  const clean = await prepare();
  const cleanTrace = newTrace();
  cleanTrace.plan = { mode: 'fail', at: Number.MAX_SAFE_INTEGER };
  await traced(cleanTrace, () => run(clean));
  await check(clean, 'a clean run');
  const cases = Array.from({ length: cleanTrace.writes }, (_, at) => async () => {
    const each = await prepare();
    const trace = newTrace();
    trace.plan = { mode: 'kill', at };
    const after = `stopped after write ${at}`;
    await expect(
      traced(trace, () => run(each)),
      after,
    ).rejects.toBeInstanceOf(InjectedFault);
    await run(each);
    await check(each, after);
  });
  await inParallel(cases, options.width ?? 1);
  return cleanTrace.writes;
}
