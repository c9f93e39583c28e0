import { logger } from '#functions/core/observability/logger.ts';
import { checkIfMatch, etagOf } from '#functions/core/api/if-match.ts';
import type { CreateTenantBody, VariableValue } from '#functions/core/api/validators/create-tenant.cjs';
import type { UpdateTenantBody } from '#functions/core/api/validators/update-tenant.cjs';
import { type TokenRotated, tokenUseView } from '#functions/core/auth/token-rotation.ts';
import { hashToken, newToken } from '#functions/core/auth/tokens.ts';
import { findClient } from '#functions/core/clients/client-repository.ts';
import { maxTenantsPerClient } from '#functions/core/clients/quotas.ts';
import { applyTemplate } from '#functions/core/templates/apply.ts';
import { apiConfig } from '#functions/core/config.ts';
import { badRequest, conflict, notFound } from '#functions/core/errors.ts';
import { type FollowUpItem, recordFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import { mapPage, type Page } from '#functions/core/store/dynamo.ts';
import { nameKey } from '#functions/core/names.ts';
import type { Alongside } from '#functions/core/store/transaction.ts';
import { type Resumable, unrecorded } from '#functions/core/store/resumable.ts';
import { defaultSchedulingGranularity } from '#functions/core/schedules/schedule-file.ts';
import { refuseMinuteSchedules } from '#functions/core/schedules/schedules.ts';
import { loadResources, templateExists } from '#functions/core/templates/template-repository.ts';
import {
  allocateTenantId,
  claimDeletion,
  dropPendingTemplate,
  endPreviousTenantToken as endPrevious,
  findTenant,
  insertTenant,
  listClientTenants,
  replaceTenantToken,
  softDeleteTenant,
  tenantNotFound,
  type TenantRecord,
  updateTenantActive,
  updateTenantFields,
} from './tenant-repository.ts';

/** What the API shows of a tenant (spec 2.1: the record's other fields are not shown). */
export interface TenantSummary {
  id: number;
  nome: string;
  dominio: string;
  ativo: boolean;
  /** The template the tenant should have and does not have yet (see TenantRecord.pendingTemplate), else null. */
  pendingTemplateId: number | null;
}

export const summarize = (tenant: TenantRecord): TenantSummary => ({
  id: tenant.tenantId,
  nome: tenant.nome,
  dominio: tenant.dominio,
  ativo: tenant.ativo,
  pendingTemplateId: tenant.pendingTemplate?.templateId ?? null,
});

/** Spec 4.1's creation answer, the only one that shows the tenant's token. */
export interface TenantCreated {
  id: number;
  nome: string;
  token: string;
  dominio: string;
  ativo: boolean;
}

/** What a retry of an interrupted creation resumes with: the tenant it made, and the token only its answer shows. */
export interface CreationCheckpoint {
  tenantId: number;
  token: string;
}

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

/**
 * Spec 4.1: creates the tenant for the client, with its token, domain and default agent, then
 * applies the template sent or the client's default one. Those are two steps: the first commits
 * with a checkpoint of the request (`record`), so a retry after a crash resumes with the same
 * tenant and token instead of making another; the answer commits with the second. A tenant
 * created inactive keeps its template pending until it is activated (spec 3: applying needs an
 * active tenant). A client has at most `maxTenantsPerClient` live tenants (409 `tenant_quota`),
 * counted in the tenant's own transaction.
 */
export async function createTenant(
  clientId: number,
  input: CreateTenantBody,
  deadline: number,
  record: Resumable<TenantCreated, CreationCheckpoint> = unrecorded(),
): Promise<TenantCreated> {
  if (record.resumeFrom) return resumeCreation(record.resumeFrom, deadline, record);
  const developmentVariables = normalizeDevelopmentVariables(input.development_variables);
  if (input.templateId !== undefined && !(await templateExists(clientId, input.templateId))) {
    throw notFound('Template not found', 'template_not_found');
  }
  const templateId = input.templateId ?? (await findClient(clientId))?.defaultTemplateId;
  const tenantId = await allocateTenantId();
  const now = new Date().toISOString();
  const token = await newToken('tenant', { clientId, tenantId });
  const tenant: TenantRecord = {
    tenantId,
    clientId,
    nome: input.nome,
    ativo: input.ativo,
    dominio: tenantDomain(input.nome, tenantId, apiConfig().tenantBaseDomain),
    developmentVariables,
    templateId: input.templateId,
    ...(templateId === undefined ? {} : { pendingTemplate: { templateId, since: now } }),
    tokenHash: hashToken(token),
    tokensLastUsedAt: {},
    createdAt: now,
    updatedAt: now,
  };
  // Field order as spec 4.1 shows it.
  const created: TenantCreated = { id: tenantId, nome: tenant.nome, token, dominio: tenant.dominio, ativo: tenant.ativo };
  if (!tenant.pendingTemplate || !tenant.ativo) {
    if ((await insertTenant(tenant, token, record.finish(created), maxTenantsPerClient)) === 'limit') throw tenantQuotaReached();
    return created;
  }
  // Counted with this first step: a retry that resumes from its checkpoint counts nothing again.
  const checkpointed = [...record.checkpoint({ tenantId, token }), provisioning(tenant)];
  const first = await insertTenant(tenant, token, checkpointed, maxTenantsPerClient);
  if (first === 'limit') throw tenantQuotaReached();
  return provision(tenant, created, deadline, record);
}

const tenantQuotaReached = () =>
  conflict(
    `A client has at most ${maxTenantsPerClient.toLocaleString('en')} live tenants: delete one to make room (a deleted tenant frees its place)`,
    'tenant_quota',
  );

/** The follow-up that applies an active tenant's pending template if the request doing it stops. */
const provisioning = (tenant: TenantRecord): FollowUpItem =>
  recordFollowUp({ kind: 'provision', ownerId: tenant.tenantId, subjectId: tenant.tenantId });

async function resumeCreation(
  checkpoint: CreationCheckpoint,
  deadline: number,
  record: Resumable<TenantCreated, CreationCheckpoint>,
): Promise<TenantCreated> {
  const tenant = await findTenant(checkpoint.tenantId);
  // The checkpoint committed with the tenant: it cannot be missing.
  if (!tenant) throw new Error(`Tenant ${checkpoint.tenantId} of a creation checkpoint is missing`);
  const { tenantId: id, nome, dominio, ativo } = tenant;
  return provision(tenant, { id, nome, token: checkpoint.token, dominio, ativo }, deadline, record);
}

/**
 * The second step of a creation: the pending template applied, and the answer committed with the
 * apply's last write. If it fails, the tenant exists and this answer is the only one that shows
 * its token, so the creation still answers; the template stays pending (GET /tenant shows it)
 * and the follow-up sweeper applies it within a few minutes.
 */
async function provision(
  tenant: TenantRecord,
  created: TenantCreated,
  deadline: number,
  record: Resumable<TenantCreated, CreationCheckpoint>,
): Promise<TenantCreated> {
  try {
    await applyPendingTemplate(tenant, deadline, record.finish(created));
  } catch (error) {
    logger.error('Applying the template of a new tenant failed; the follow-up sweeper will finish it', {
      tenantId: tenant.tenantId,
      templateId: tenant.pendingTemplate?.templateId,
      error: error as Error,
    });
  }
  return created;
}

/**
 * Applies the tenant's pending template, if it is active and has one, committing `alongside` with
 * the apply's last write; a pending template that was deleted since is dropped (with `alongside`).
 * The plan is not handed to anyone here: its tables stay pending for the tenant's next apply.
 */
export async function applyPendingTemplate(tenant: TenantRecord, deadline: number, alongside: Alongside = []): Promise<void> {
  const pending = tenant.pendingTemplate;
  if (!pending || !tenant.ativo || tenant.deletedAt) return;
  if (!(await templateExists(tenant.clientId, pending.templateId))) {
    logger.warn('The pending template of a tenant was deleted; it is dropped', {
      tenantId: tenant.tenantId,
      templateId: pending.templateId,
    });
    await dropPendingTemplate(tenant, alongside);
    return;
  }
  await applyTemplate(tenant.tenantId, pending.templateId, {
    deadline,
    keepPlanPending: true,
    alongside,
    version: pending.version,
  });
}

/** The client's own live tenant; another client's, a deleted or an unknown one is the same 404. */
export async function findClientTenant(clientId: number, tenantId: number): Promise<TenantRecord> {
  const tenant = await findTenant(tenantId);
  if (!tenant || tenant.clientId !== clientId || tenant.deletedAt) throw tenantNotFound();
  return tenant;
}

/** GET /tenants' filters: exact, each when given. */
export interface TenantFilter {
  /** The whole name, compared as names are where one must be unique (names.ts `nameKey`): as a reader tells names apart. */
  nome?: string;
  ativo?: boolean;
}

/** GET /tenants: the client's live tenants by id; only those `filter` names, when it names any. */
export async function listTenants(
  clientId: number,
  filter: TenantFilter,
  limit: number,
  cursor: string | undefined,
): Promise<Page<TenantSummary>> {
  const { ativo } = filter;
  const nome = filter.nome === undefined ? undefined : nameKey(filter.nome);
  const keep =
    nome === undefined && ativo === undefined
      ? undefined
      : (tenant: TenantRecord) =>
          (ativo === undefined || tenant.ativo === ativo) && (nome === undefined || nameKey(tenant.nome) === nome);
  return mapPage(await listClientTenants(clientId, limit, cursor, keep), summarize);
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
  throw conflict('The tenant changed while this request ran; retry it', 'concurrent_change');
}

/**
 * How long a deletion's claim lasts when its caller does not give its deadline: a route's time-out
 * (`routeTimeoutSeconds` in functions/routes.ts, not imported: its table would come into every
 * bundle of this module), after which Lambda has ended the function.
 */
const deletionClaimMs = 15_000;

/**
 * Spec 4.3 / DELETE /tenants: soft delete, tokens (the tenant's, its agents') revoked in the same
 * transaction, billing record kept. The deletion first claims the tenant until its function's
 * deadline (`deadline`; a route's time-out from now when not given), so that agents created or
 * rotated while it runs cannot keep it re-reading (a tenant token holder rotating an agent's token
 * in a loop would otherwise hold the deletion off for good); its transaction still holds to the
 * agents as it read them.
 */
export function deleteTenant(clientId: number, tenantId: number, deadline = Date.now() + deletionClaimMs): Promise<true> {
  return withCurrentTenant(clientId, tenantId, async (tenant) => {
    const claimed = await claimDeletion(tenant, deadline);
    return claimed && (await softDeleteTenant(claimed, new Date().toISOString())) ? true : undefined;
  });
}

/**
 * Activates or deactivates the tenant. Activating one that has a pending template (created
 * inactive with one) applies it, as creation would have: the follow-up commits with the
 * activation, so the sweeper finishes the apply if this request does not.
 */
export async function setTenantActive(
  clientId: number,
  tenantId: number,
  ativo: boolean,
  deadline: number,
): Promise<TenantSummary> {
  const updated = await withCurrentTenant(clientId, tenantId, async (tenant) => {
    const updatedAt = new Date().toISOString();
    const at = Date.parse(updatedAt);
    const stamp = ativo ? {} : { sessionsValidAfterMs: at, sessionsValidAfter: Math.floor(at / 1000) };
    const next: TenantRecord = { ...tenant, ativo, updatedAt, ...stamp };
    const followUps = ativo && tenant.pendingTemplate ? [provisioning(tenant)] : [];
    return (await updateTenantActive(tenant, ativo, next.updatedAt, followUps)) ? next : undefined;
  });
  if (!updated.pendingTemplate || !ativo) return summarize(updated);
  try {
    await applyPendingTemplate(updated, deadline);
  } catch (error) {
    logger.error('Applying the pending template of an activated tenant failed; the follow-up sweeper will finish it', {
      tenantId,
      error: error as Error,
    });
  }
  return summarize((await findTenant(tenantId)) ?? updated);
}

/**
 * A new tenant token, shown once; the one it replaces keeps working for `previousValidForSeconds` (a
 * day when not given; 0: it stops at once), ending the previous token an earlier rotation kept.
 */
export function rotateTenantToken(clientId: number, tenantId: number, previousValidForSeconds?: number): Promise<TokenRotated> {
  let token: string | undefined;
  let grace = previousValidForSeconds;
  return withCurrentTenant(clientId, tenantId, async (tenant) => {
    // Minted once the tenant is found (its ids are then ones a token can carry), kept across retries.
    token ??= await newToken('tenant', { clientId: tenant.clientId, tenantId: tenant.tenantId });
    const outcome = await replaceTenantToken(tenant, token, new Date().toISOString(), grace);
    if (typeof outcome === 'object') return { id: tenantId, token, ...outcome };
    // The old token's item is gone: there is nothing left to keep working.
    if (outcome === 'replaced_missing') grace = 0;
    return undefined;
  });
}

/** Ends the tenant's previous token now; `ended` says whether one still worked (none is no error). */
export function endPreviousTenantToken(clientId: number, tenantId: number): Promise<{ id: number; ended: boolean }> {
  return withCurrentTenant(clientId, tenantId, async (tenant) => {
    const outcome = await endPrevious(tenant, new Date().toISOString());
    return outcome === 'changed' ? undefined : { id: tenantId, ...outcome };
  });
}

/** The template version the tenant has (`pendingTemplateId` names one it is still to get) and its granularity. */
const templateState = (tenant: TenantRecord) => ({
  template: tenant.appliedTemplate
    ? {
        id: tenant.appliedTemplate.templateId,
        version: tenant.appliedTemplate.version,
        appliedAt: tenant.appliedTemplate.appliedAt,
      }
    : null,
  schedulingGranularity: tenant.schedulingGranularity ?? defaultSchedulingGranularity,
});

/** The ETag of a tenant: its last change. */
export const tenantEtag = (tenant: Pick<TenantRecord, 'updatedAt'>) => etagOf(tenant.updatedAt);

/**
 * GET /tenants/{id} (and what PATCH answers): what the client set and what the tenant has, and when
 * its tokens were last used (what says whether the previous one still serves anyone).
 */
export function describeClientTenant(tenant: TenantRecord) {
  return {
    ...summarize(tenant),
    development_variables: tenant.developmentVariables,
    ...templateState(tenant),
    createdAt: tenant.createdAt,
    updatedAt: tenant.updatedAt,
    ...tokenUseView(tenant),
  };
}

/**
 * PATCH /tenants/{id}: a new name, new development_variables (either format, normalized and checked
 * as on creation, replacing the old ones) or a new schedulingGranularity, in one conditional write.
 * The domain never changes. Going back to hours while a schedule has Minute triggers is a 409 that
 * lists them; with If-Match, a tenant changed since it was read is a 409 too.
 */
export async function updateTenant(
  clientId: number,
  tenantId: number,
  changes: UpdateTenantBody,
  ifMatch: string | undefined,
): Promise<TenantRecord> {
  const developmentVariables =
    changes.development_variables === undefined ? undefined : normalizeDevelopmentVariables(changes.development_variables);
  for (let attempt = 0; attempt < 3; attempt++) {
    const tenant = await findClientTenant(clientId, tenantId);
    checkIfMatch(ifMatch, tenantEtag(tenant), 'tenant');
    const next: TenantRecord = {
      ...tenant,
      nome: changes.nome ?? tenant.nome,
      developmentVariables: developmentVariables ?? tenant.developmentVariables,
      schedulingGranularity: changes.schedulingGranularity ?? tenant.schedulingGranularity,
      updatedAt: new Date().toISOString(),
    };
    if (await updateTenantFields(tenant, next)) return next;
    if (changes.schedulingGranularity === 'hours') await refuseMinuteSchedules(tenantId);
  }
  throw conflict('The tenant changed while this request ran; retry it', 'concurrent_change');
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
    ...templateState(tenant),
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
