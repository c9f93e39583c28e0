import type { NamedItem, RequestRecord } from './transaction.ts';

/**
 * What the caller of an operation adds to the operation's own transactions so that a retry of the
 * whole request either finds it done or resumes it where it stopped (the Idempotency-Key of the
 * HTTP API: functions/core/api/idempotency.ts). Because the items ride in the operation's
 * transactions, a step and the record of it commit together or not at all: no crash can leave an
 * effect without its record, or a record without its effect.
 */
export interface Resumable<Result, Progress = never> {
  /** Items for the operation's last transaction, given the result it will return. */
  finish(result: Result): NamedItem<RequestRecord>[];
  /** Items for the transaction of a step that a retry should resume after, recording what it needs to. */
  checkpoint(progress: Progress): NamedItem<RequestRecord>[];
  /** What the last checkpoint of an earlier attempt recorded, when this attempt resumes one that stopped. */
  resumeFrom: Progress | undefined;
}

/** For an operation whose caller keeps no record (no Idempotency-Key, a worker, the admin CLI): adds nothing. */
export function unrecorded<Result, Progress = never>(): Resumable<Result, Progress> {
  return { finish: () => [], checkpoint: () => [], resumeFrom: undefined };
}
