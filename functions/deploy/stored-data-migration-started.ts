/**
 * The `onEvent` function of the stored data migration's custom resource (lib/stored-data-migration.ts,
 * CDK's provider framework): it only names the resource; the work is done by
 * stored-data-migration-complete.ts, which the framework calls until it says done. A Delete does
 * nothing: the data stays as it is.
 */
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { latestMigration } from '#functions/core/migrations/stored-data.ts';
import { logger } from '#functions/core/observability/logger.ts';

export async function handler(event: CloudFormationCustomResourceEvent) {
  logger.info('Stored data migration requested', { requestType: event.RequestType, latestMigration });
  // One per table, the same on every request, so an Update never replaces the resource.
  return { PhysicalResourceId: `stored-data-migration:${String(event.ResourceProperties.TableName)}` };
}
