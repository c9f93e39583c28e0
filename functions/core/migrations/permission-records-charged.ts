/**
 * Migration 6: every permission record charged to its subject's quota. Earlier versions wrote
 * records without `charge`, their answer bytes on no one's quota (a user's own records count on the
 * user item's `permBytes`, every group's on the tenant's `COUNT#GROUPPERMBYTES`). Each such record
 * gets its charge and its subject is charged the same, in one commit conditional on the record as
 * read; the charge has no quota condition, since the records are there whatever it says (a subject
 * over its quota is refused its next growth, as after any write). A record whose subject is gone is
 * deleted instead, as the subject's sweep would. Records and charges are what the release before
 * this one writes: it reads them as its own.
 */
import { chargeStoredRecord, type UnchargedPermission } from '#functions/core/datamarts/datamart-repository.ts';
import { permissionCharge } from '#functions/core/datamarts/effective-permissions.ts';
import { storedRecordsCharge } from '#functions/core/datamarts/ledger.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import type { Migration } from '#functions/core/store/migrations.ts';

export const permissionRecordsCharged: Migration = {
  version: 6,
  name: 'permission-records-charged',
  selects: [{ entity: stored.permission, where: { expression: 'attribute_not_exists(charge)' } }],
  async migrate(item) {
    const record = item as unknown as UnchargedPermission;
    const charge = permissionCharge(record.datamartId, record);
    await chargeStoredRecord(record, charge, storedRecordsCharge(record.tenantId, record.subject, record.subjectId, charge));
  },
};
