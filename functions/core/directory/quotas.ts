/**
 * The quotas that keep every item a read route answers (a user with their groups and effective
 * permissions, a group with its members, the list of groups) within one answer (6 MB, as it travels:
 * functions/core/api/whole-list.ts), whatever the tenant writes. Each is kept by a count that the
 * writing transaction itself conditions on (never read, then written), as the agent limit is.
 * test/unit/answer-bound.test.ts works the worst case out from these numbers and the schemas.
 *
 * - A user's groups come from at most `maxGroupsPerTenant` groups.
 * - A user's effective permissions come from their own records and their groups' records: each
 *   record adds at most its charge (`permissionCharge`: the bytes it would take as an entry of its
 *   own, its hidden columns and filters once in the flat fields and once in its grant, escaped as the
 *   answer carries it) to them; a user's own records are charged to the user
 *   (`maxUserPermissionBytes`), every group's records to the tenant (`maxGroupPermissionBytes`),
 *   since a user may be in every group.
 * - A group lists its members, and the list of groups every membership: at most
 *   `maxMembershipsPerTenant` of them (which also bounds the groups a user is in by the groups).
 *
 * And how many users and datamarts a tenant may have (bounded growth: a tenant creates nothing
 * without a quota), each kept the same way by a count in the tenant's partition that the creating
 * and the deleting transactions change (store/counts.ts). Past one, the creation is a 409 naming it.
 */

/** Users a tenant may have (`COUNT#USERS`, kept by the user's creation and deletion; 409 `user_limit`). */
export const maxUsersPerTenant = 100_000;

/** Datamarts a tenant may have (`COUNT#DATAMARTS`, kept by the datamart's creation and deletion; 409 `datamart_limit`). */
export const maxDatamartsPerTenant = 1_000;

/** Groups a tenant may have (`COUNT#GROUPS`, kept by the group's creation and deletion). */
export const maxGroupsPerTenant = 1_000;

/** Memberships a tenant may have, over all its groups (`COUNT#MEMBERSHIPS`, kept by every membership write and sweep). */
export const maxMembershipsPerTenant = 200_000;

/** What a user's own permission records may add to their effective permissions, in answer bytes (the user item's `permBytes`). */
export const maxUserPermissionBytes = 1024 * 1024;

/** What all the tenant's group permission records may add to a user's effective permissions, in answer bytes (`COUNT#GROUPPERMBYTES`). */
export const maxGroupPermissionBytes = 4 * 1024 * 1024;

/** What one datamart may take in an answer (spec 2.3: its tables with their columns, and its owners), checked when it is written. */
export const maxDatamartBytes = 4 * 1024 * 1024;
