/**
 * Stored data migrates (issue 36): a migration brings every item of an earlier shape to the shape
 * this release writes, so that readers know one shape. The runner applies the migrations the table
 * has not had yet, in their order, one Scan page at a time; its progress (the migrations applied,
 * the one running and where its Scan stopped) is one item, written after each page, so a run that
 * stops anywhere (a crash, its deadline) is resumed by the next from that page. A migration's
 * rewrite of an item is conditional on what it read and the same when repeated, so the page it was
 * on when it stopped can be run again. One runner at a time holds the state's lease (until its own
 * deadline, so a runner that died frees it then).
 *
 * It runs at deploy (functions/deploy/stored-data-migration-*.ts, before any function of the
 * release takes traffic) and when the twin starts (local/). A migration writes only shapes the release
 * before it already reads and writes, so a release rolled back reads what its successor migrated.
 */
import { randomUUID } from 'node:crypto';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, getItem, tableName } from './dynamo.ts';
import type { DeclaredEntity } from './entities.ts';
import { migrationState } from './entity-declarations.ts';

/**
 * Which items a migration rewrites: those of a declared entity (by its key's constant prefixes, and
 * its sort key's first facets when `key` gives them), that meet `where`, a condition on their other
 * attributes (never `pk` or `sk`, so that it can also filter a Query of one partition; its `#`
 * names and `:` values are its own).
 */
export interface Selection {
  readonly entity: DeclaredEntity;
  readonly key?: Readonly<Record<string, unknown>>;
  readonly where?: Condition;
}

export interface Condition {
  readonly expression: string;
  readonly names?: Readonly<Record<string, string>>;
  readonly values?: Readonly<Record<string, unknown>>;
}

export interface Migration {
  /** Its place in the order: applied after every lower one, never reused. */
  readonly version: number;
  readonly name: string;
  /** The items it rewrites (any of these); the runner's Scan sends no other. */
  readonly selects: readonly Selection[];
  /** Brings one selected item to the current shape: conditional on what it read, the same when repeated. */
  migrate(item: Record<string, unknown>): Promise<void>;
}

/** The constant starts of the keys a selection's items have. */
export const keyPrefixesOf = ({ entity, key = {} }: Selection) => ({
  pk: entity.declaration.key.pk.constantPrefix,
  sk: entity.declaration.key.sk.prefix(key as never, 'sort'),
});

/** The Scan filter that selects a migration's items: any of its selections, each its key prefixes and its condition. */
function scanFilterOf(migration: Migration): Condition {
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const merge = <T>(into: Record<string, T>, from: Readonly<Record<string, T>> = {}) => {
    for (const [name, value] of Object.entries(from)) {
      if (name in into && into[name] !== value) throw new Error(`${migration.name}: ${name} stands for two values`);
      into[name] = value;
    }
  };
  const expression = migration.selects
    .map((selection, index) => {
      const prefixes = keyPrefixesOf(selection);
      merge(values, { [`:pk${index}`]: prefixes.pk, [`:sk${index}`]: prefixes.sk });
      merge(names, selection.where?.names);
      merge(values, selection.where?.values);
      const keyed = `begins_with(pk, :pk${index}) AND begins_with(sk, :sk${index})`;
      return selection.where ? `(${keyed} AND (${selection.where.expression}))` : `(${keyed})`;
    })
    .join(' OR ');
  return { expression, ...(Object.keys(names).length > 0 ? { names } : {}), values };
}

/** The state item: what the table has had, and the run in progress. */
export interface MigrationState {
  /** The highest version applied (0: none). */
  applied: number;
  /** The migration running and where its Scan goes on from (absent: from the start). */
  running?: { version: number; cursor?: Record<string, unknown> };
  holder?: string;
  heldUntil?: number;
}

/** Migrations applied in order, with a state of their own (the service's: migrations/stored-data.ts). */
export interface MigrationSet {
  readonly name: string;
  readonly migrations: readonly Migration[];
}

export type MigrationRun =
  | { done: true; applied: number }
  /** Stopped at its deadline (`busy`: another runner holds the lease): the next run goes on. */
  | { done: false; applied: number; busy?: true };

export interface MigrationOptions {
  /** When the caller must have its answer (epoch ms): no page starts within `pageTime` of it. */
  deadline: number;
  /** Items read per Scan page (before the filter). */
  pageSize?: number;
  /** How long a page may take, at most: the margin kept before the deadline. */
  pageTime?: number;
}

type StateKey = { pk: string; sk: string };

/** A page's items are migrated this many at a time. */
const parallelism = 8;

/**
 * Applies the migrations of `set` the table has not had (in any order; versions unique), until done
 * or the deadline; answers what is applied.
 */
export async function runMigrations(set: MigrationSet, options: MigrationOptions): Promise<MigrationRun> {
  const stateKey = migrationState.key({ set: set.name });
  const ordered = [...set.migrations].sort((a, b) => a.version - b.version);
  if (new Set(ordered.map((migration) => migration.version)).size !== ordered.length) {
    throw new Error('Two migrations share a version');
  }
  const { deadline, pageSize = 100, pageTime = 60_000 } = options;
  const holder = randomUUID();
  const state = await takeLease(stateKey, holder, deadline);
  if (!state) {
    // Another runner holds the lease: done all the same if the table already has every migration this set knows
    // (a rolled-back release's deploy runs an older set, and must not wait on a newer runner).
    const applied = await appliedVersion(set);
    return applied >= Math.max(0, ...ordered.map(({ version }) => version))
      ? { done: true, applied }
      : { done: false, applied, busy: true };
  }
  let applied = state.applied ?? 0;
  let running = state.running;
  try {
    for (const migration of ordered.filter(({ version }) => version > applied)) {
      let cursor = running?.version === migration.version ? running.cursor : undefined;
      do {
        if (Date.now() + pageTime > deadline) return { done: false, applied };
        const filter = scanFilterOf(migration);
        const page = await db().send(
          new ScanCommand({
            TableName: tableName(),
            Limit: pageSize,
            ExclusiveStartKey: cursor,
            ConsistentRead: true,
            FilterExpression: filter.expression,
            ExpressionAttributeNames: filter.names,
            ExpressionAttributeValues: filter.values,
          }),
        );
        const items = page.Items ?? [];
        for (let start = 0; start < items.length; start += parallelism) {
          await Promise.all(items.slice(start, start + parallelism).map((item) => migration.migrate(item)));
        }
        cursor = page.LastEvaluatedKey;
        running = { version: migration.version, cursor };
        await saveProgress(stateKey, holder, cursor ? { running } : { applied: migration.version });
      } while (cursor);
      applied = migration.version;
      running = undefined;
    }
    return { done: true, applied };
  } finally {
    await releaseLease(stateKey, holder);
  }
}

/** The highest version the table has had. */
export async function appliedVersion(set: MigrationSet): Promise<number> {
  return (await getItem<MigrationState>(migrationState.key({ set: set.name })))?.applied ?? 0;
}

/** The state, with the lease taken until `until`; undefined when another runner holds it. */
async function takeLease(stateKey: StateKey, holder: string, until: number): Promise<MigrationState | undefined> {
  try {
    const { Attributes } = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: stateKey,
        UpdateExpression: 'SET holder = :holder, heldUntil = :until, applied = if_not_exists(applied, :none)',
        ConditionExpression: 'attribute_not_exists(heldUntil) OR heldUntil < :now',
        ExpressionAttributeValues: { ':holder': holder, ':until': until, ':now': Date.now(), ':none': 0 },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return Attributes as MigrationState;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/** Records a page's progress, only while the lease is still this runner's. */
async function saveProgress(
  stateKey: StateKey,
  holder: string,
  progress: { running: NonNullable<MigrationState['running']> } | { applied: number },
) {
  const update =
    'running' in progress
      ? { expression: 'SET running = :running', values: { ':running': progress.running } }
      : { expression: 'SET applied = :applied REMOVE running', values: { ':applied': progress.applied } };
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: stateKey,
      UpdateExpression: update.expression,
      ConditionExpression: 'holder = :holder',
      ExpressionAttributeValues: { ...update.values, ':holder': holder },
    }),
  );
}

async function releaseLease(stateKey: StateKey, holder: string): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: stateKey,
        UpdateExpression: 'REMOVE holder, heldUntil',
        ConditionExpression: 'holder = :holder',
        ExpressionAttributeValues: { ':holder': holder },
      }),
    );
  } catch (error) {
    // Another runner took the lease once this one's deadline passed: it is theirs now.
    if (!(error instanceof ConditionalCheckFailedException)) throw error;
  }
}
