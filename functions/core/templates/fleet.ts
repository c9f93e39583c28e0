import { mapPage, type Page } from '#functions/core/store/dynamo.ts';
import { findTenants } from '#functions/core/tenants/tenant-repository.ts';
import { templateNotFound } from './catalogue.ts';
import { listFleetPage } from './fleet-repository.ts';
import { findTemplate } from './template-repository.ts';

/** A tenant of a template's fleet, as GET /tenants/templates/{id}/tenants lists it. */
export interface FleetTenant {
  tenantId: number;
  nome: string;
  ativo: boolean;
  templateVersion: number | null;
  applyPending: boolean;
}

/**
 * A page of the tenants that have one of the client's templates, by version then id (`belowVersion`:
 * only those on an earlier version, or none yet): one Query of the fleet's index, then the page's
 * tenants in one batch read, for their names and states.
 */
export async function listTemplateTenants(
  clientId: number,
  templateId: number,
  options: { belowVersion: number | undefined; limit: number; cursor: string | undefined },
): Promise<Page<FleetTenant>> {
  const [template, page] = await Promise.all([findTemplate(clientId, templateId), listFleetPage(clientId, templateId, options)]);
  if (!template) throw templateNotFound();
  const tenants = await findTenants(page.items.map((member) => member.tenantId));
  // A tenant deleted between the two reads (its deletion took it out of the fleet) shows as inactive, without a name.
  return mapPage(page, (member): FleetTenant => {
    const tenant = tenants.get(member.tenantId);
    return {
      tenantId: member.tenantId,
      nome: tenant?.nome ?? '',
      ativo: tenant?.ativo ?? false,
      templateVersion: member.templateVersion || null,
      applyPending: member.pending,
    };
  });
}
