/**
 * Migration 7: every run expires. Earlier versions wrote runs (`RUN#`) without `expiresAt`, the
 * table's TTL attribute, and with a copy of the tenant's development variables (up to 64 KiB): they
 * never expired by themselves. Each gets the expiry a run written at its `createdAt` gets (so one
 * older than the retention is deleted by DynamoDB soon after), and loses the copy.
 */
import { expireEarlierRun } from '#functions/core/reload/run-repository.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import type { Migration } from '#functions/core/store/migrations.ts';

export const runsExpire: Migration = {
  version: 7,
  name: 'runs-expire',
  selects: [{ entity: stored.run, where: { expression: 'attribute_not_exists(expiresAt)' } }],
  async migrate(item) {
    await expireEarlierRun(item as { pk: string; sk: string; createdAt: string });
  },
};
