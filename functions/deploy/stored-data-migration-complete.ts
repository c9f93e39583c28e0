/**
 * The `isComplete` function of the stored data migration's custom resource (lib/stored-data-migration.ts):
 * each call runs the migrations the table has not had (functions/core/store/migrations.ts) for most
 * of its time-out, and says whether the table has them all; CDK's provider framework calls it again
 * until it does (for up to the provider's total time-out). The release's functions wait for the
 * resource, so none takes traffic before the data is in the shape it reads.
 */
import type { CloudFormationCustomResourceEvent, Context } from 'aws-lambda';
import { latestMigration, migrateStoredData } from '#functions/core/migrations/stored-data.ts';
import { logger } from '#functions/core/observability/logger.ts';

/** Kept for the last page's progress write and the answer. */
const margin = 30_000;

export async function handler(event: CloudFormationCustomResourceEvent, context: Context) {
  if (event.RequestType === 'Delete') return { IsComplete: true };
  const run = await migrateStoredData(Date.now() + context.getRemainingTimeInMillis() - margin);
  logger.info('Stored data migration ran', { ...run, latestMigration });
  // The provider framework fails the resource when Data comes with IsComplete false (rather than calling again), so only
  // a finished run answers any.
  return run.done ? { IsComplete: true, Data: { Applied: run.applied } } : { IsComplete: false };
}
