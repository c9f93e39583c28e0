/**
 * Migration 1: every datamart in the shape this release reads. Earlier versions kept a datamart's
 * tables and owners as items of its collection (`S#TABLE#`, `S#OWNER#`, the owners also in a
 * per-user index) rather than as lists on its record, left its owners out of the owners index, and
 * indexed its permission records by subject (one index partition per subject) rather than in the
 * tenant's permission index; their records lack `tenantIndexed`. Each such datamart gets its lists
 * on its record with its owners' entries in the owners index (one commit, conditional on the record
 * as read), its records' index entries moved, its structure items deleted, what its lists no longer
 * hold tidied, and last `tenantIndexed`, so a run stopped anywhere finds it again and repeats only
 * what is left.
 */
import { findUsers, ownersIndexEntries } from '#functions/core/directory/directory-repository.ts';
import {
  type DatamartRecord,
  indexPermissionRecords,
  markTenantIndexed,
  replaceDatamart,
  type StoredPermission,
} from '#functions/core/datamarts/datamart-repository.ts';
import { tidyDatamart } from '#functions/core/datamarts/datamarts.ts';
import { deleteAll, queryAll } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import type { Migration } from '#functions/core/store/migrations.ts';

type CollectionItem = { pk: string; sk: string; tableId?: number; userId?: number; gsi1pk?: string };

/** The record's sort key: the datamart declaration's, which has no facet. */
const recordSk = stored.datamart.keyPrefix({});
const tablesPrefix = stored.datamartTable.keyPrefix({});
const ownersPrefix = stored.datamartOwner.keyPrefix({});

/** A record changed by a request while it migrates is read again, this many times at most. */
const attempts = 5;

export const datamartsInTenantIndexes: Migration = {
  version: 1,
  name: 'datamarts-in-tenant-indexes',
  selects: [{ entity: stored.datamart, where: { expression: 'attribute_not_exists(tenantIndexed)' } }],
  async migrate(item) {
    const { tenantId, datamartId } = item as unknown as DatamartRecord;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (await migrateDatamart(tenantId, datamartId)) return;
    }
    throw new Error(`Datamart ${datamartId} of tenant ${tenantId} kept changing while it migrated: the next run takes it again`);
  },
};

/** One pass over the datamart's collection; false when a request changed its record meanwhile. */
async function migrateDatamart(tenantId: number, datamartId: number): Promise<boolean> {
  const items = await queryAll<CollectionItem & Partial<DatamartRecord>>(stored.datamart.partition({ tenantId, datamartId }), '');
  const record = items.find((each) => each.sk === recordSk) as (DatamartRecord & CollectionItem) | undefined;
  if (!record || record.tenantIndexed) return true;
  const structureItems = items.filter((each) => each.sk.startsWith(tablesPrefix) || each.sk.startsWith(ownersPrefix));
  const tableIds =
    record.tableIds ?? structureItems.flatMap((each) => (each.sk.startsWith(tablesPrefix) ? [each.tableId as number] : []));
  const ownerIds =
    record.ownerIds ?? structureItems.flatMap((each) => (each.sk.startsWith(ownersPrefix) ? [each.userId as number] : []));
  const owners = await findUsers(tenantId, ownerIds);
  const { pk: _pk, sk: _sk, gsi1pk: _gsi1pk, ...fields } = record;
  const written = await replaceDatamart(record, { ...fields, tableIds, ownerIds }, ownersIndexEntries(owners));
  if (written !== 'written') return false;

  const tenantIndex = stored.permission.indexes.gsi1.partition({ tenantId });
  await indexPermissionRecords(
    items.filter(
      (each): each is CollectionItem & StoredPermission =>
        each.sk.startsWith(stored.permission.keyPrefix({})) && each.gsi1pk !== tenantIndex,
    ),
  );
  await deleteAll(structureItems.map(({ pk, sk }) => ({ pk, sk })));
  await tidyDatamart(tenantId, datamartId);
  await markTenantIndexed(tenantId, datamartId);
  return true;
}
