/**
 * Migration 8: every tenant in its template's fleet. Earlier versions kept a tenant's template only
 * on its record (`appliedTemplate`, `pendingTemplate`); the fleet (GET /tenants/templates/{id}/tenants,
 * rollouts) reads one item per tenant in the template's index partition. Each live tenant with a
 * template gets that item, unless it has one: an apply, a creation or a rollout since wrote it, and
 * it is newer.
 */
import * as stored from '#functions/core/store/entity-declarations.ts';
import type { Migration } from '#functions/core/store/migrations.ts';
import { putMemberIfAbsent } from '#functions/core/templates/fleet-repository.ts';
import type { TenantRecord } from '#functions/core/tenants/tenant-repository.ts';

export const templatesHaveFleets: Migration = {
  version: 8,
  name: 'templates-have-fleets',
  selects: [
    {
      entity: stored.tenant,
      where: {
        expression:
          'attribute_not_exists(deletedAt) AND (attribute_exists(appliedTemplate) OR attribute_exists(pendingTemplate))',
      },
    },
  ],
  async migrate(item) {
    const tenant = item as unknown as TenantRecord;
    // The template it waits for is the one it has (no other applies meanwhile); else the one it applied last.
    const templateId = tenant.pendingTemplate?.templateId ?? tenant.appliedTemplate?.templateId;
    if (templateId === undefined) return;
    const templateVersion = tenant.appliedTemplate?.templateId === templateId ? tenant.appliedTemplate.version : 0;
    await putMemberIfAbsent({
      tenantId: tenant.tenantId,
      clientId: tenant.clientId,
      templateId,
      templateVersion,
      pending: tenant.pendingTemplate !== undefined,
    });
  },
};
