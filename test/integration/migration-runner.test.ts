/**
 * The migration runner (functions/core/store/migrations.ts) on a table of this file's own, so that
 * each run scans only what the test put there: migrations applied in version order, once; a run
 * stopped at any write (a crash) or at its deadline resumes and ends in the state a clean run
 * leaves; a second runner waits for the first's lease.
 */
import { randomUUID } from 'node:crypto';
import { DeleteTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { db, deleteAll, getItem, putAll, tableName, writeIf } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { type Migration, type MigrationSet, runMigrations } from '#functions/core/store/migrations.ts';
import { ensureTable } from '#local/create-table.ts';
import { InjectedFault, installFaultInjection, newTrace, traced } from '#test/support/faults.ts';
import { scanAll } from '#test/support/migrations.ts';

// Before any module reads its configuration: every request of this file goes to this table.
process.env.TABLE_NAME = `migration-runner-${randomUUID()}`;

beforeAll(async () => {
  const client = new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
  await ensureTable(client, tableName());
  client.destroy();
  installFaultInjection();
});
// The table goes with the file: DynamoDB Local is shared by the whole run.
afterAll(async () => {
  const client = new DynamoDBClient({ endpoint: process.env.DYNAMODB_ENDPOINT });
  await client.send(new DeleteTableCommand({ TableName: tableName() }));
  client.destroy();
});

const itemCount = 23;

/**
 * A scenario's items: tenant resources of a type of its own (a declared entity, so that the runner's
 * Scan selects them by its key prefixes, and only this scenario's by the type).
 */
const resourceOf = (type: string, id: number) => stored.tenantResource.key({ tenantId: 1, type, id });

/** A migration that moves a scenario's items from shape `from` to `to`, recording which it rewrote. */
function reshape(type: string, from: number, to: number, rewritten: string[] = []): Migration {
  return {
    version: to,
    name: `shape-${to}`,
    selects: [
      { entity: stored.tenantResource, key: { type }, where: { expression: 'shape = :from', values: { ':from': from } } },
    ],
    async migrate(item) {
      const written = await writeIf(() =>
        db().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: { pk: item.pk, sk: item.sk },
            UpdateExpression: 'SET shape = :to',
            ConditionExpression: 'shape = :from',
            ExpressionAttributeValues: { ':from': from, ':to': to },
          }),
        ),
      );
      if (written) rewritten.push(String(item.sk));
    },
  };
}

/** `count` items in shape 0, and a set of two migrations (0 to 1, 1 to 2) given out of order. */
async function scenario(count = itemCount) {
  const type = `mtest${randomUUID().replaceAll('-', '')}`;
  await putAll(Array.from({ length: count }, (_, index) => ({ ...resourceOf(type, index), shape: 0 })));
  const rewritten: string[] = [];
  const set: MigrationSet = {
    name: `test-${randomUUID()}`,
    migrations: [reshape(type, 1, 2, rewritten), reshape(type, 0, 1, rewritten)],
  };
  return { type, set, rewritten };
}

async function shapesOf(type: string): Promise<number[]> {
  const prefix = stored.tenantResource.keyPrefix({ type });
  const items = await scanAll({ expression: 'begins_with(sk, :prefix)', values: { ':prefix': prefix } });
  return items.map((item) => item.shape as number);
}

const stateOf = (set: MigrationSet) => getItem<Record<string, unknown>>(stored.migrationState.key({ set: set.name }));
const later = () => Date.now() + 60_000;

describe('the migration runner', () => {
  test('a run stopped at any write ends, after the next run, as a clean run does', async () => {
    // Few items, small pages: every kind of write (lease, rewrite, progress, end of a migration, release) is stopped
    // at. First in the file, each case's items deleted after it: the table stays small, so the count of writes holds.
    const count = 4;
    const options = { pageSize: 3, pageTime: 0 };
    const clean = await scenario(count);
    const cleanTrace = newTrace();
    cleanTrace.plan = { mode: 'fail', at: Number.MAX_SAFE_INTEGER };
    await traced(cleanTrace, () => runMigrations(clean.set, { deadline: later(), ...options }));
    const writes = cleanTrace.writes;
    expect(writes).toBeGreaterThan(2 * count + 2);
    await deleteAll(Array.from({ length: count }, (_, index) => resourceOf(clean.type, index)));

    for (let at = 0; at < writes; at++) {
      const { type, set } = await scenario(count);
      const trace = newTrace();
      trace.plan = { mode: 'kill', at };
      await expect(
        traced(trace, () => runMigrations(set, { deadline: later(), ...options })),
        `stopped after write ${at}`,
      ).rejects.toBeInstanceOf(InjectedFault);
      // Its lease lasts until its deadline (a stop before the lease's write left none): a runner meanwhile waits.
      // (Done all the same once the table has both migrations: stopped before its release.)
      const applied = ((await stateOf(set))?.applied as number | undefined) ?? 0;
      const meanwhile = await runMigrations(set, { deadline: later(), ...options });
      if (at > 0) {
        expect(meanwhile, `after write ${at}`).toEqual(
          applied === 2 ? { done: true, applied } : { done: false, applied, busy: true },
        );
      }
      // Its deadline passes.
      await writeIf(() =>
        db().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: stored.migrationState.key({ set: set.name }),
            UpdateExpression: 'SET heldUntil = :past',
            ConditionExpression: 'attribute_exists(heldUntil)',
            ExpressionAttributeValues: { ':past': 0 },
          }),
        ),
      );
      expect(await runMigrations(set, { deadline: later(), ...options }), `after write ${at}`).toEqual({
        done: true,
        applied: 2,
      });
      expect(await shapesOf(type), `after write ${at}`).toEqual(Array(count).fill(2));
      expect(await stateOf(set), `after write ${at}`).toEqual({ ...stored.migrationState.key({ set: set.name }), applied: 2 });
      await deleteAll(Array.from({ length: count }, (_, index) => resourceOf(type, index)));
    }
  }, 240_000);

  test('applies a set in version order, each item once, and a second run rewrites nothing', async () => {
    const { type, set, rewritten } = await scenario();
    expect(await runMigrations(set, { deadline: later(), pageSize: 5, pageTime: 0 })).toEqual({ done: true, applied: 2 });
    expect(await shapesOf(type)).toEqual(Array(itemCount).fill(2));
    // Each item twice: once per migration, 0 to 1 first.
    expect(rewritten).toHaveLength(2 * itemCount);
    expect(await stateOf(set)).toEqual({ ...stored.migrationState.key({ set: set.name }), applied: 2 });

    expect(await runMigrations(set, { deadline: later(), pageSize: 5, pageTime: 0 })).toEqual({ done: true, applied: 2 });
    expect(rewritten).toHaveLength(2 * itemCount);
  });

  test('a run past its deadline stops between pages, its cursor kept, and the next goes on to the end', async () => {
    const { type, set } = await scenario();
    // No page starts within a minute of the deadline: this one starts none.
    expect(await runMigrations(set, { deadline: Date.now() + 1_000, pageSize: 5, pageTime: 60_000 })).toEqual({
      done: false,
      applied: 0,
    });
    expect(await shapesOf(type)).toEqual(Array(itemCount).fill(0));
    // Its first page takes it past its deadline: it stops after that page, where the state says. The
    // deadline leaves the run seconds to start that page on a loaded machine; the page then waits past it.
    const deadline = Date.now() + 3_000;
    const slowFirstPage: MigrationSet = {
      ...set,
      migrations: set.migrations.map((migration) => ({
        ...migration,
        migrate: async (item) => {
          await new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now() + 10)));
          await migration.migrate(item);
        },
      })),
    };
    expect(await runMigrations(slowFirstPage, { deadline, pageSize: 5, pageTime: 0 })).toEqual({ done: false, applied: 0 });
    expect(await stateOf(set)).toMatchObject({ applied: 0, running: { version: 1, cursor: expect.any(Object) } });
    expect(await runMigrations(set, { deadline: later(), pageSize: 5, pageTime: 0 })).toEqual({ done: true, applied: 2 });
    expect(await shapesOf(type)).toEqual(Array(itemCount).fill(2));
  });

  test('two runners at once: both end done or one says busy, and the items are migrated once', async () => {
    const { type, set, rewritten } = await scenario();
    const runs = await Promise.all([
      runMigrations(set, { deadline: later(), pageSize: 5, pageTime: 0 }),
      runMigrations(set, { deadline: later(), pageSize: 5, pageTime: 0 }),
    ]);
    expect(runs).toContainEqual({ done: true, applied: 2 });
    for (const run of runs)
      expect([
        { done: true, applied: 2 },
        { done: false, applied: expect.any(Number), busy: true },
      ]).toContainEqual(run);
    expect(rewritten).toHaveLength(2 * itemCount);
    expect(await shapesOf(type)).toEqual(Array(itemCount).fill(2));
  });

  test("a lease held by another runner: done at once if the table has every migration of the set (an older set's too), else busy", async () => {
    const { type, set } = await scenario();
    await runMigrations(set, { deadline: later(), pageTime: 0 });
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: stored.migrationState.key({ set: set.name }),
        UpdateExpression: 'SET holder = :holder, heldUntil = :until',
        ExpressionAttributeValues: { ':holder': 'another runner', ':until': later() },
      }),
    );
    expect(await runMigrations(set, { deadline: later(), pageTime: 0 })).toEqual({ done: true, applied: 2 });
    const older = { ...set, migrations: set.migrations.filter(({ version }) => version === 1) };
    expect(await runMigrations(older, { deadline: later(), pageTime: 0 })).toEqual({ done: true, applied: 2 });
    const newer = { ...set, migrations: [...set.migrations, reshape(type, 2, 3)] };
    expect(await runMigrations(newer, { deadline: later(), pageTime: 0 })).toEqual({ done: false, applied: 2, busy: true });
  });

  test('versions are unique in a set', async () => {
    const { type } = await scenario();
    const set = { name: 'duplicate', migrations: [reshape(type, 0, 1), reshape(type, 2, 1)] };
    await expect(runMigrations(set, { deadline: later() })).rejects.toThrow('Two migrations share a version');
  });
});
