import { type TransactItem, transactOrReasons } from './dynamo.ts';

/**
 * Transactions of named items: the caller says what each item is (`tx.add('user', …)`), and hears
 * which conditions failed by those names, never by position, so moving or adding an item cannot
 * change which answer a caller gives. Several items may share a name (a claim written as two
 * items): the name is reported when any of them fails. The names are a union of string literals
 * given to `transaction<…>()`: a misspelt one is a compile error.
 */

/** One item of a transaction, with the name its failed condition is reported by. */
export interface NamedItem<Name extends string> {
  readonly name: Name;
  readonly item: TransactItem;
}

/**
 * The name of an idempotent request's own record (api/idempotency-repository.ts), added by
 * `Resumable.finish` and `.checkpoint`. Its failed condition never reaches the caller: another
 * attempt took the request over, and transactOrReasons (dynamo.ts) throws that, knowing the
 * record by its key.
 */
export const requestRecord = 'requestRecord';
export type RequestRecord = typeof requestRecord;

/** The name of the count a counted transaction adds (counts.ts); no item of a caller's has it. */
export const countItem = 'count';
type Reserved = RequestRecord | typeof countItem;

/**
 * The names of what the callers of a write add to its transaction (`alongside`), named by the
 * module that makes them: their request's record, a follow-up (follow-ups/follow-up-repository.ts), a
 * tenant's place in its template's fleet (templates/fleet-repository.ts), a rollout's step on a tenant
 * (rollouts/rollout-repository.ts) and the integrator's events it causes (events/client-events.ts).
 * A write's transaction declares them among its own names.
 */
export type AlongsideName = RequestRecord | 'followUp' | 'templateMember' | 'rolloutTarget' | 'clientEvent';

/** What the callers of a write add to its transaction; `Extra`, what a write takes besides (a datamart, its owners' index entries). */
export type Alongside<Extra extends string = never> = readonly NamedItem<AlongsideName | Extra>[];

/** What a transaction did: written, or the names of the items whose condition failed (nothing written). */
export type TransactionOutcome<Name extends string> = { written: true } | { written: false; failed: ReadonlySet<Name> };

export interface Transaction<Name extends string> {
  /** Adds items under a name of the caller's. */
  add(name: Exclude<Name, Reserved>, ...items: readonly TransactItem[]): Transaction<Name>;
  /** Adds items another module named (its request's record, a follow-up, `alongside`). */
  include(items: readonly NamedItem<Name | RequestRecord>[]): Transaction<Name>;
  /** The items so far, in order. */
  readonly items: readonly NamedItem<Name | RequestRecord>[];
  /** Runs the transaction as transactOrReasons does (conflicts retried; a request taken over throws; anything else rethrown). */
  commit(): Promise<TransactionOutcome<Exclude<Name, RequestRecord>>>;
}

/** A transaction to fill with `add` and `include`, then `commit`. */
export function transaction<Name extends string>(): Transaction<Name> {
  const items: NamedItem<Name | RequestRecord>[] = [];
  const tx: Transaction<Name> = {
    add(name, ...added) {
      items.push(...added.map((item) => ({ name, item })));
      return tx;
    },
    include(named) {
      items.push(...named);
      return tx;
    },
    items,
    async commit() {
      const outcome = await transactOrReasons(items.map(({ item }) => item));
      if (outcome.written) return outcome;
      // A request record's failure was thrown: what failed here are the caller's own names.
      const failed = outcome.failedConditions.flatMap((index) => items[index]?.name ?? []);
      return { written: false, failed: new Set(failed as Exclude<Name, RequestRecord>[]) };
    },
  };
  return tx;
}

/** A name for each of many items of one kind, told apart by their keys (a sweep that drops the ones that failed). */
export const nameByKey = <Kind extends string>(kind: Kind, key: { pk: string; sk: string }) =>
  `${kind} ${key.pk} ${key.sk}` as const;
