import { groupPermissionCharge, userPermissionCharge } from '#functions/core/directory/directory-repository.ts';
import { maxGroupPermissionBytes, maxUserPermissionBytes } from '#functions/core/directory/quotas.ts';
import type { PermissionLedger } from './datamart-repository.ts';

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
