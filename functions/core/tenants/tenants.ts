import { logger } from '#functions/core/observability/logger.ts';
import type { CreateTenantBody, VariableValue } from '#functions/core/api/validators/create-tenant.cjs';
import { hashToken, newToken } from '#functions/core/auth/tokens.ts';
import { findClient } from '#functions/core/clients/client-repository.ts';
import { applyTemplate } from '#functions/core/templates/apply.ts';
import { apiConfig } from '#functions/core/config.ts';
import { badRequest, conflict, notFound } from '#functions/core/errors.ts';
import type { Page } from '#functions/core/store/dynamo.ts';
import { loadResources, templateExists } from '#functions/core/templates/template-repository.ts';
import {
  allocateTenantId,
  findTenant,
  insertTenant,
  listClientTenants,
  replaceTenantToken,
  softDeleteTenant,
  tenantNotFound,
  type TenantRecord,
  updateTenantActive,
} from './tenant-repository.ts';

/** What the API shows of a tenant (spec 2.1: the record's other fields are not shown). */
export interface TenantSummary {
  id: number;
  nome: string;
  dominio: string;
  ativo: boolean;
}

export const summarize = (tenant: TenantRecord): TenantSummary => ({
  id: tenant.tenantId,
  nome: tenant.nome,
  dominio: tenant.dominio,
  ativo: tenant.ativo,
});

/**
 * Both accepted formats as one object (DESIGN 7). The schema has already checked the shape; a
 * key repeated in the array format is the one rule a JSON Schema cannot express.
 */
export function normalizeDevelopmentVariables(input: CreateTenantBody['development_variables']): Record<string, VariableValue> {
  if (input === undefined) return {};
  const variables = new Map<string, VariableValue>();
  if (Array.isArray(input)) {
    input.forEach(({ key, value }, index) => {
      if (variables.has(key)) {
        throw invalidVariables(
          `duplicate key ${JSON.stringify(key)}`,
          `/development_variables/${index}/key`,
          'duplicates an earlier key',
        );
      }
      variables.set(key, value);
    });
  } else {
    for (const [key, value] of Object.entries(input)) variables.set(key, value);
  }
  const normalized = Object.fromEntries(variables);
  // They travel with every queued load and are kept on every run: bounded as a whole, too.
  if (Buffer.byteLength(JSON.stringify(normalized)) > maxDevelopmentVariablesBytes) {
    throw invalidVariables(`larger than ${maxDevelopmentVariablesBytes} bytes as JSON`, '/development_variables', 'is too large');
  }
  return normalized;
}

export const maxDevelopmentVariablesBytes = 64 * 1024;

const invalidVariables = (why: string, pointer: string, message: string) =>
  badRequest(`Invalid development_variables format: ${why}`, [{ location: 'body', pointer, message }], 'validation_failed');

/** `<slug-of-nome>-<id>.<base>`: unique because the id is, readable because of the slug, never changed. */
export function tenantDomain(nome: string, tenantId: number, baseDomain: string): string {
  const slug =
    nome
      .normalize('NFKD')
      .replace(/[\u0300-\u036f]/g, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .slice(0, 40)
      .replace(/^-+|-+$/g, '') || 'tenant';
  return `${slug}-${tenantId}.${baseDomain}`;
}

/** Spec 4.1: creates the tenant for the client, with its token and domain. */
export async function createTenant(clientId: number, input: CreateTenantBody): Promise<TenantSummary & { token: string }> {
  const developmentVariables = normalizeDevelopmentVariables(input.development_variables);
  if (input.templateId !== undefined && !(await templateExists(clientId, input.templateId))) {
    throw notFound('Template not found');
  }
  const tenantId = await allocateTenantId();
  const now = new Date().toISOString();
  const token = newToken('tenant');
  const tenant: TenantRecord = {
    tenantId,
    clientId,
    nome: input.nome,
    ativo: input.ativo,
    dominio: tenantDomain(input.nome, tenantId, apiConfig().tenantBaseDomain),
    developmentVariables,
    templateId: input.templateId,
    tokenHash: hashToken(token),
    createdAt: now,
    updatedAt: now,
  };
  await insertTenant(tenant, token);
  await applyOnCreation(tenant, input.templateId);
  // Field order as spec 4.1 shows it.
  return { id: tenantId, nome: tenant.nome, token, dominio: tenant.dominio, ativo: tenant.ativo };
}

/**
 * Spec 4.1 steps 2-3: the template sent, else the client's default one, is applied at once. The
 * tenant and its token exist already and the token is shown only in this answer, so a failed
 * apply does not fail the creation: it is logged, its journal stays pending, and the tenant's
 * next POST /tenant/templates/apply converges.
 */
async function applyOnCreation(tenant: TenantRecord, requested: number | undefined): Promise<void> {
  const templateId = requested ?? (await findClient(tenant.clientId))?.defaultTemplateId;
  if (templateId === undefined) return;
  try {
    await applyTemplate(tenant.tenantId, templateId, { onCreation: true });
  } catch (error) {
    logger.error('Applying the template of a new tenant failed', {
      tenantId: tenant.tenantId,
      templateId,
      error: error as Error,
    });
  }
}

/** The client's own live tenant; another client's, a deleted or an unknown one is the same 404. */
export async function findClientTenant(clientId: number, tenantId: number): Promise<TenantRecord> {
  const tenant = await findTenant(tenantId);
  if (!tenant || tenant.clientId !== clientId || tenant.deletedAt) throw tenantNotFound();
  return tenant;
}

export async function listTenants(clientId: number, limit: number, cursor: string | undefined): Promise<Page<TenantSummary>> {
  const page = await listClientTenants(clientId, limit, cursor);
  return { items: page.items.map(summarize), nextCursor: page.nextCursor };
}

/**
 * Re-reads and retries when a concurrent write (a rotation, say) changed the tenant between the
 * read and the conditional write, so callers never act on a stale token hash.
 */
async function withCurrentTenant<T>(
  clientId: number,
  tenantId: number,
  write: (tenant: TenantRecord) => Promise<T | undefined>,
): Promise<T> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const result = await write(await findClientTenant(clientId, tenantId));
    if (result !== undefined) return result;
  }
  throw conflict('The tenant changed while this request ran; retry it');
}

/** Spec 4.3 / DELETE /tenants: soft delete, token revoked in the same transaction, billing record kept. */
export function deleteTenant(clientId: number, tenantId: number): Promise<true> {
  return withCurrentTenant(clientId, tenantId, async (tenant) =>
    (await softDeleteTenant(tenant, new Date().toISOString())) ? true : undefined,
  );
}

export async function setTenantActive(clientId: number, tenantId: number, ativo: boolean): Promise<TenantSummary> {
  return withCurrentTenant(clientId, tenantId, async (tenant) => {
    const updated = await updateTenantActive(tenant, ativo, new Date().toISOString());
    return updated && summarize(updated);
  });
}

/** A new tenant token, shown once; the previous one stops working at once. */
export function rotateTenantToken(clientId: number, tenantId: number): Promise<{ id: number; token: string }> {
  const token = newToken('tenant');
  return withCurrentTenant(clientId, tenantId, async (tenant) =>
    (await replaceTenantToken(tenant, token, new Date().toISOString())) ? { id: tenantId, token } : undefined,
  );
}

/**
 * GET /tenant: the token's own tenant, the template version it has, and the applications, desks
 * (with their tables) and flows its templates put in it: what an integrator builds a menu from.
 */
export async function describeOwnTenant(tenantId: number) {
  const [tenant, resources] = await Promise.all([findTenant(tenantId), loadResources(tenantId)]);
  if (!tenant || tenant.deletedAt) throw tenantNotFound();
  const byId = (a: { id: number }, b: { id: number }) => a.id - b.id;
  const tables = resources.filter((resource) => resource.type === 'table').sort(byId);
  return {
    ...summarize(tenant),
    template: tenant.appliedTemplate
      ? {
          id: tenant.appliedTemplate.templateId,
          version: tenant.appliedTemplate.version,
          appliedAt: tenant.appliedTemplate.appliedAt,
        }
      : null,
    schedulingGranularity: tenant.schedulingGranularity ?? 'hours',
    applications: resources
      .filter((resource) => resource.type === 'application')
      .sort(byId)
      .map(({ id, key, nome, route }) => ({ id, key, nome, route })),
    desks: resources
      .filter((resource) => resource.type === 'desk')
      .sort(byId)
      .map(({ id, key, nome }) => ({
        id,
        key,
        nome,
        tables: tables
          .filter((table) => table.deskKey === key)
          .map((table) => ({ id: table.id, key: table.key, nome: table.nome })),
      })),
    // What a schedule's flow_etl_id and a reload item's flowId name.
    flows: resources
      .filter((resource) => resource.type === 'flow')
      .sort(byId)
      .map(({ id, key, nome, context }) => ({ id, key, nome, context })),
  };
}
