/**
 * `record[key]` when `key` is the record's own property, else `undefined`. For lookups by a key
 * that comes from a request: a plain object inherits `constructor`, `toString`, `valueOf`… from
 * Object.prototype, so `record['valueOf']` would find a function where no entry was written.
 */
export const ownValue = <T>(record: Readonly<Record<string, T>>, key: string): T | undefined =>
  Object.hasOwn(record, key) ? record[key] : undefined;
