/**
 * Every migration of stored data, in the order the table has them (store/migrations.ts runs them).
 * A new one takes the next version; none is ever removed while a deployment may hold data it rewrites.
 */
import { type MigrationRun, type MigrationSet, runMigrations } from '#functions/core/store/migrations.ts';
import { agentTokensRevokedWithTenant } from './agent-tokens-revoked-with-tenant.ts';
import { countsKept } from './counts-kept.ts';
import { datamartsInTenantIndexes } from './datamarts-in-tenant-indexes.ts';
import { permissionRecordsCharged } from './permission-records-charged.ts';
import { runsExpire } from './runs-expire.ts';
import { schedulesInCurrentShape } from './schedules-in-current-shape.ts';
import { templateNamesClaimed } from './template-names-claimed.ts';
import { templatesHaveFleets } from './templates-have-fleets.ts';
import { templatesInCurrentShape } from './templates-in-current-shape.ts';

export const storedData: MigrationSet = {
  name: 'stored-data',
  migrations: [
    datamartsInTenantIndexes,
    permissionRecordsCharged,
    schedulesInCurrentShape,
    templatesInCurrentShape,
    templateNamesClaimed,
    countsKept,
    runsExpire,
    templatesHaveFleets,
    agentTokensRevokedWithTenant,
  ],
};

/** The latest version: what a table that has every migration has applied. */
export const latestMigration = Math.max(0, ...storedData.migrations.map((migration) => migration.version));

/** Applies what the table has not had yet, until done or `deadline` (epoch ms). */
export function migrateStoredData(deadline: number): Promise<MigrationRun> {
  return runMigrations(storedData, { deadline });
}
