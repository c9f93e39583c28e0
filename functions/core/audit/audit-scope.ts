import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The audit record a request (or an admin CLI command) owes, carried beside its work in an
 * AsyncLocalStorage scope: store/dynamo.ts asks it for the record when the request commits its
 * first change, so the record is in the change's own transaction (audit-record.ts builds it). Only
 * this small module is imported by the store; what the record holds and how it is chained is
 * audit-record.ts's business, reached through `commitWith`.
 */

/** What a transaction's commit answers (dynamo.ts `transactOrReasons`). */
export type CommitOutcome = { written: true } | { written: false; failedConditions: number[] };

export interface AuditScope {
  /** Whether the record is still owed: no change of the request has committed yet. */
  readonly pending: boolean;
  /**
   * Commits `items` (the change) through `send`, with the record, its chain's new head and, for an
   * idempotent request, its marker added: on success the record is written and no longer owed. The
   * failed conditions it answers are those of `items` only (the audit items' own are handled here).
   */
  commitWith(items: readonly unknown[], send: (all: readonly unknown[]) => Promise<CommitOutcome>): Promise<CommitOutcome>;
  /** An id the request allocated from a counter (dynamo.ts `nextId`): a creation's record names what it created. */
  noteAllocated(counter: string, id: number): void;
}

/** What the record adds to a transaction at most: the record, its chain's head and an idempotent request's marker. */
export const auditItemsPerTransaction = 3;

const storage = new AsyncLocalStorage<AuditScope>();

/** Runs `work` owing `scope`'s record. */
export const withAuditScope = <T>(scope: AuditScope, work: () => Promise<T>): Promise<T> => storage.run(scope, work);

/** The record the current request still owes, if any. */
export function pendingAudit(): AuditScope | undefined {
  const scope = storage.getStore();
  return scope?.pending ? scope : undefined;
}

/**
 * Runs `work` outside any request's scope. For a queue worker or a timer (api/worker-handler.ts),
 * which records nothing; and for a write that is no change of its own, made before the change that
 * carries the record: a lease or a lock (a deletion's claim on its tenant, an apply's journal lock),
 * or a step written under such a journal (an apply's resources). A lease frees itself, a journal
 * left open is resumed or rolled over by the next apply, and the transaction that closes the change
 * carries the record.
 */
export const outsideAuditScope = <T>(work: () => Promise<T>): Promise<T> => storage.exit(work);

/** The current request's scope, written or not (for notes that name what it creates). */
export const currentAudit = (): AuditScope | undefined => storage.getStore();

/**
 * Writes nothing in a scope may make before its record: counters (ids taken, never a change on their
 * own), idempotency records (the request's own bookkeeping) and quota counts started from what they
 * count. Anything else written while the record is owed would be a change without its record.
 */
export function writableBeforeRecord(key: { pk?: unknown; sk?: unknown }): boolean {
  const pk = String(key.pk ?? '');
  const sk = String(key.sk ?? '');
  return pk === 'COUNTER' || pk.startsWith('IDEMPOTENCY#') || sk.startsWith('COUNTER#') || sk.startsWith('COUNT#');
}
