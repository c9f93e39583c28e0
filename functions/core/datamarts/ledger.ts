import { groupPermissionCharge, userPermissionCharge } from '#functions/core/directory/directory-repository.ts';
import { maxGroupPermissionBytes, maxUserPermissionBytes } from '#functions/core/directory/quotas.ts';
import type { TransactItem } from '#functions/core/store/dynamo.ts';
import type { PermissionLedger, PermissionSubject } from './datamart-repository.ts';

/**
 * The quotas of what permission records add to a user's effective permissions (directory/quotas.ts),
 * as the items the records' transactions carry: a user's own records are charged to the user item,
 * every group's to the tenant's count. A charge fails when the subject is gone (so no record is
 * written for a user or group deleted meanwhile) or over its quota.
 */
export function permissionLedger(tenantId: number): PermissionLedger {
  return {
    charge: (subject, subjectId, delta) =>
      subject === 'user'
        ? [userPermissionCharge(tenantId, subjectId, delta, maxUserPermissionBytes)]
        : groupPermissionCharge(tenantId, subjectId, delta, maxGroupPermissionBytes),
    release: (subject, subjectId, delta) =>
      subject === 'user'
        ? [userPermissionCharge(tenantId, subjectId, delta, maxUserPermissionBytes)]
        : groupPermissionCharge(tenantId, subjectId, delta, maxGroupPermissionBytes, false),
  };
}

/**
 * The items that charge records already stored (migrations/permission-records-charged.ts) to their
 * subject: they fail when the subject is gone, never for the quota, since the records are there
 * whatever it says (a subject over it is refused its next growth, as for any write).
 */
export function storedRecordsCharge(
  tenantId: number,
  subject: PermissionSubject,
  subjectId: number,
  delta: number,
): TransactItem[] {
  return subject === 'user'
    ? [userPermissionCharge(tenantId, subjectId, delta, undefined)]
    : groupPermissionCharge(tenantId, subjectId, delta, undefined);
}
