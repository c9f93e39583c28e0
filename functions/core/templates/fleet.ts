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
  // A second level, and the only one that must wait: the names and states are on the tenant items, whose
  // keys are the page's tenant ids, known only from the page. The one read that finds them without the
  // ids, the client's tenants index, reads every tenant of the client, not the page's (at 100x data a
  // hundredfold); one level would take the name and state on each member item, a write at every rename,
  // activation and deactivation.
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
