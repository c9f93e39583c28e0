import { outsideAuditScope } from '#functions/core/audit/audit-scope.ts';
import { agentRevocationItems, defaultAgentItems, endPreviousAgentToken } from '#functions/core/agents/agent-repository.ts';
import type { VariableValue } from '#functions/core/api/validators/create-tenant.cjs';
import { newTokenWrite, revokeTokenWrite, tenantDeletedTokenWrite } from '#functions/core/auth/token-repository.ts';
import { type OwnedTokens, previousTokenEnd, tokenRotation } from '#functions/core/auth/token-rotation.ts';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clientCountKey } from '#functions/core/clients/client-repository.ts';
import { maxTenantsPerClient } from '#functions/core/clients/quotas.ts';
import { countedTransaction } from '#functions/core/store/counts.ts';
import { db, getAll, getItem, nextId, type Page, queryFilteredPage, queryPage, tableName } from '#functions/core/store/dynamo.ts';
import { clearFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import { memberDelete, memberPut } from '#functions/core/templates/fleet-repository.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { type Alongside, type AlongsideName, type Transaction, transaction } from '#functions/core/store/transaction.ts';
import { conflict, notFound } from '#functions/core/errors.ts';
import type { SchedulingGranularity } from '#functions/core/schedules/schedule-file.ts';

/** The tenant token's fields (OwnedTokens): `tokenHash`, its current one's, lets rotation and deletion revoke it. */
export interface TenantRecord extends OwnedTokens {
  tenantId: number;
  clientId: number;
  nome: string;
  ativo: boolean;
  dominio: string;
  developmentVariables: Record<string, VariableValue>;
  /** The template chosen at creation. */
  templateId?: number;
  /**
   * A template the tenant should have and does not have yet: the one chosen at creation (or the
   * client's default) while the tenant is inactive, or while its application has not finished (the
   * creating request, its retry or the follow-up sweeper finishes it). Removed by the apply that
   * applies it, in the same transaction.
   */
  pendingTemplate?: {
    templateId: number;
    since: string;
    /** The version a rollout left for the tenant's activation; the latest without it. */
    version?: number;
  };
  /** The template version the tenant last finished applying. */
  appliedTemplate?: { templateId: number; version: number; appliedAt: string };
  /** Whether its schedules may use Minute triggers; `hours` when absent. */
  schedulingGranularity?: SchedulingGranularity;
  /** How many of its schedules have Minute triggers (kept with each schedule write). */
  minuteSchedules?: number;
  /**
   * Epoch millisecond of the tenant's last deactivation: login tokens and BI sessions issued up to it
   * (inclusive) stay void after a reactivation (sso/revocation.ts).
   */
  sessionsValidAfterMs?: number;
  /** Its epoch second, as versions before `sessionsValidAfterMs` wrote and read it (still written, for them). */
  sessionsValidAfter?: number;
  createdAt: string;
  updatedAt: string;
  deletedAt?: string;
  /**
   * Epoch milliseconds until which a deletion claims the tenant (`claimDeletion`): meanwhile no
   * agent is created and no agent token rotated. Removed by the deletion's transaction; a claim
   * whose holder died ends with that holder's time-out.
   */
  deletingUntil?: number;
}

export const tenantNotFound = () => notFound('Tenant not found', 'tenant_not_found');
/** DESIGN 7: an inactive tenant's token still reads, but apply, reload, login and schedules refuse. */
export const tenantInactive = () => conflict('Tenant is inactive', 'tenant_inactive');

const tenantKeys = (tenant: Pick<TenantRecord, 'tenantId' | 'clientId'>) => ({
  ...stored.tenant.key(tenant),
  ...stored.tenant.indexEntry(tenant),
});

export const allocateTenantId = () => nextId('tenant');

/** Commits `tx` with a change to the client's count of live tenants (clients/quotas.ts): +1 for a creation, -1 for a deletion. */
const liveTenantsWrite = <Name extends string>(clientId: number, delta: 1 | -1, max: number, tx: Transaction<Name>) =>
  countedTransaction(clientCountKey(clientId, 'TENANTS'), { delta, max }, tx);

/** A deletion is never refused by the quota. */
const noMaximum = Number.MAX_SAFE_INTEGER;

/**
 * Writes the tenant, its token and its default agent together: none exists without the others.
 * `alongside`: what the caller records in the same commit (its request's checkpoint or answer, a
 * follow-up). The client's count of live tenants grows in the same transaction, conditioned on
 * staying within `max`: `limit` when the client has that many live tenants already (nothing written).
 * A creation that commits its first step with a checkpoint is counted with it, so the retry that
 * resumes from the checkpoint counts nothing again.
 */
export async function insertTenant(
  tenant: TenantRecord,
  token: string,
  alongside: Alongside,
  max = maxTenantsPerClient,
): Promise<'written' | 'limit'> {
  const tx = transaction<'defaultAgent' | 'tenant' | 'token' | AlongsideName>()
    .include(alongside)
    .add('defaultAgent', ...(await defaultAgentItems(tenant.tenantId, tenant.clientId, tenant.createdAt)))
    .add('tenant', {
      Put: {
        TableName: tableName(),
        Item: { ...tenant, ...tenantKeys(tenant) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    })
    .add('token', newTokenWrite(token, { kind: 'tenant', clientId: tenant.clientId, tenantId: tenant.tenantId }));
  // A tenant created with a template is in that template's fleet from the start, waiting for it.
  if (tenant.pendingTemplate) {
    const { tenantId, clientId } = tenant;
    tx.include([
      memberPut({ tenantId, clientId, templateId: tenant.pendingTemplate.templateId, templateVersion: 0, pending: true }),
    ]);
  }
  const outcome = await liveTenantsWrite(tenant.clientId, 1, max, tx);
  if (outcome.written) return 'written';
  if ('limit' in outcome) return 'limit';
  throw new Error(`Tenant ${tenant.tenantId} or its token already exists`);
}

/** Consistent read: a tenant just deleted or rotated is seen as such. */
export async function findTenant(tenantId: number): Promise<TenantRecord | undefined> {
  return getItem<TenantRecord>(stored.tenant.key({ tenantId }));
}

/** Several tenants by id in one BatchGetItem per hundred (consistent), by id; missing ones are left out. */
export async function findTenants(tenantIds: readonly number[]): Promise<Map<number, TenantRecord>> {
  const tenants = await getAll<TenantRecord>(tenantIds.map((tenantId) => stored.tenant.key({ tenantId })));
  return new Map(tenants.map((tenant) => [tenant.tenantId, tenant]));
}

/** A page of the client's live tenants, by id; only those `keep` accepts, when given (a filtered page: queryFilteredPage). */
export function listClientTenants(
  clientId: number,
  limit: number,
  cursor: string | undefined,
  keep?: (tenant: TenantRecord) => boolean,
): Promise<Page<TenantRecord>> {
  const list = { index: 'gsi1' as const, partition: stored.tenant.indexes.gsi1.partition({ clientId }), limit, cursor };
  return keep ? queryFilteredPage<TenantRecord>({ ...list, keep }) : queryPage<TenantRecord>(list);
}

/** Guards every write on a tenant read just before: same owner, not deleted, token unchanged. */
const unchangedSinceRead = {
  ConditionExpression: 'clientId = :clientId AND attribute_not_exists(deletedAt) AND tokenHash = :tokenHash',
};
const unchangedValues = (tenant: TenantRecord) => ({ ':clientId': tenant.clientId, ':tokenHash': tenant.tokenHash });

/**
 * Claims the tenant for its deletion until `until` (epoch ms, the deleting function's deadline):
 * from then on its agents' creations and token rotations are refused (their transactions check
 * the claim), so the agents the deletion then lists stay as listed, however many requests race it.
 * A deletion that died leaves its claim to expire, or to the next deletion, which takes it over.
 * The tenant as it is now; undefined when it was deleted or is not the client's.
 */
export async function claimDeletion(tenant: TenantRecord, until: number): Promise<TenantRecord | undefined> {
  try {
    const result = await outsideAuditScope(() =>
      db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: stored.tenant.key(tenant),
          UpdateExpression: 'SET deletingUntil = :until',
          ConditionExpression: 'clientId = :clientId AND attribute_not_exists(deletedAt)',
          ExpressionAttributeValues: { ':clientId': tenant.clientId, ':until': until },
          ReturnValues: 'ALL_NEW',
        }),
      ),
    );
    return result.Attributes as TenantRecord;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/**
 * Soft delete: marks the tenant deleted, drops it from the client's list, marks its token (which
 * answers 404 `Tenant not found` from then on) and revokes its previous one, revokes its agents'
 * tokens, keeps a billing record and takes the tenant off the client's count of live tenants (its
 * place is free), in one transaction (at most 50 agents keep it well under DynamoDB's 100 items).
 * The agents are read just before, and the transaction holds to them: `false` when the tenant, or its
 * agents (one created, a token rotated), changed since they were read. An agent's creation and
 * rotation check in turn that the tenant is neither deleted nor claimed by a deletion
 * (`claimDeletion`, taken just before this), so whichever commits second sees the first. The agents'
 * previous tokens (kept by rotations, at most one each) are ended just before the transaction,
 * which 50 more items would not fit in: under the claim no rotation makes another, and a rotation
 * that got in all the same (a claim that expired) changes a current token the transaction holds to.
 */
export async function softDeleteTenant(tenant: TenantRecord, deletedAt: string): Promise<boolean> {
  const { items: agentTokens, withPreviousTokens } = await agentRevocationItems(tenant.tenantId);
  // Each ended as `DELETE /tenant/agents/{id}/token/previous` ends it, the agent's record with it: a deletion
  // that then never commits leaves agents whose records say what still works.
  await Promise.all(withPreviousTokens.map((agent) => endPreviousAgentToken(agent)));
  const tx = transaction<'agentTokens' | 'tenant' | 'tokenMark' | 'previousToken' | 'deletionRecord' | 'templateMember'>()
    .add('agentTokens', ...agentTokens)
    // A deleted tenant leaves its template's fleet.
    .include([memberDelete(tenant.tenantId)])
    .add('tenant', {
      Update: {
        TableName: tableName(),
        Key: stored.tenant.key(tenant),
        UpdateExpression: 'SET deletedAt = :deletedAt, updatedAt = :deletedAt REMOVE gsi1pk, gsi1sk, deletingUntil',
        ...unchangedSinceRead,
        ExpressionAttributeValues: { ...unchangedValues(tenant), ':deletedAt': deletedAt },
      },
    })
    // Unconditional: the tenant's tokenHash condition above already pins which token this is.
    .add('tokenMark', tenantDeletedTokenWrite(tenant.tokenHash, deletedAt))
    // Revoked, not marked (its item may be gone by TTL; a mark would make one): 401 from now on.
    .add('previousToken', ...(tenant.previousTokenHash === undefined ? [] : [revokeTokenWrite(tenant.previousTokenHash)]))
    .add('deletionRecord', {
      Put: {
        TableName: tableName(),
        Item: {
          ...stored.tenantDeletionRecord.key(tenant),
          tenantId: tenant.tenantId,
          clientId: tenant.clientId,
          nome: tenant.nome,
          createdAt: tenant.createdAt,
          deletedAt,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    });
  const outcome = await liveTenantsWrite(tenant.clientId, -1, noMaximum, tx);
  return outcome.written;
}

/**
 * Replaces the tenant token; the old one keeps working for `previousValidForSeconds`
 * (token-rotation.ts) or stops in the same transaction, and the previous token an earlier rotation
 * kept stops. Not while a deletion claims the tenant (`claimDeletion`): the deletion marks and revokes
 * the tokens it read, and rotations in a loop would otherwise keep it re-reading. The previous token's
 * expiry when written (null: none kept); `changed` when the tenant changed since it was read;
 * `replaced_missing` when the old token's item is gone (nothing left to keep: rotate with no grace).
 */
export async function replaceTenantToken(
  tenant: TenantRecord,
  newToken: string,
  updatedAt: string,
  previousValidForSeconds: number | undefined,
): Promise<{ previousExpiresAt: string | null } | 'changed' | 'replaced_missing'> {
  const { clientId, tenantId } = tenant;
  const rotation = tokenRotation(tenant, newToken, { kind: 'tenant', clientId, tenantId }, previousValidForSeconds);
  const outcome = await transaction<'tenant' | 'replacedToken' | 'endedToken' | 'newToken'>()
    .add('tenant', {
      Update: {
        TableName: tableName(),
        Key: stored.tenant.key(tenant),
        UpdateExpression: rotation.ownerUpdate(['updatedAt = :updatedAt']),
        ConditionExpression: `${unchangedSinceRead.ConditionExpression} AND (attribute_not_exists(deletingUntil) OR deletingUntil < :now)`,
        ExpressionAttributeValues: {
          ...unchangedValues(tenant),
          ...rotation.ownerValues,
          ':updatedAt': updatedAt,
          ':now': Date.now(),
        },
      },
    })
    .add('replacedToken', rotation.replacedToken)
    .add('endedToken', ...rotation.endedTokens)
    .add('newToken', rotation.newToken)
    .commit();
  if (outcome.written) return { previousExpiresAt: rotation.previousExpiresAt };
  return outcome.failed.has('tenant') ? 'changed' : 'replaced_missing';
}

/**
 * Ends the tenant's previous token now, if it is as read: whether it still worked (false too when
 * it had none); `changed` when the tenant or its previous token changed since it was read.
 */
export async function endPreviousTenantToken(tenant: TenantRecord, updatedAt: string): Promise<{ ended: boolean } | 'changed'> {
  const end = previousTokenEnd(tenant);
  if (!end) return { ended: false };
  const outcome = await transaction<'tenant' | 'endedToken'>()
    .add('tenant', {
      Update: {
        TableName: tableName(),
        Key: stored.tenant.key(tenant),
        UpdateExpression: end.ownerUpdate(['updatedAt = :updatedAt']),
        ConditionExpression: `${unchangedSinceRead.ConditionExpression} AND previousTokenHash = :previousTokenHash`,
        ExpressionAttributeValues: { ...unchangedValues(tenant), ...end.ownerValues, ':updatedAt': updatedAt },
      },
    })
    .add('endedToken', end.endedToken)
    .commit();
  return outcome.written ? { ended: end.wasLive } : 'changed';
}

/**
 * Sets `ativo`, with `alongside` in the same commit (the follow-up that applies a pending template
 * on activation); `false` when the tenant was deleted or changed since it was read. A deactivation
 * also stamps `sessionsValidAfterMs` (the instant of `updatedAt`) and its second
 * `sessionsValidAfter`: what was issued until then stays void after a reactivation.
 */
export async function updateTenantActive(
  tenant: TenantRecord,
  ativo: boolean,
  updatedAt: string,
  alongside: Alongside,
): Promise<boolean> {
  const at = Date.parse(updatedAt);
  const stamp = ativo ? {} : { ':stampMs': at, ':stamp': Math.floor(at / 1000) };
  const stamps = ativo ? '' : ', sessionsValidAfterMs = :stampMs, sessionsValidAfter = :stamp';
  const outcome = await transaction<'tenant' | AlongsideName>()
    .add('tenant', {
      Update: {
        TableName: tableName(),
        Key: stored.tenant.key(tenant),
        UpdateExpression: `SET ativo = :ativo, updatedAt = :updatedAt${stamps}`,
        ...unchangedSinceRead,
        ExpressionAttributeValues: { ...unchangedValues(tenant), ':ativo': ativo, ':updatedAt': updatedAt, ...stamp },
      },
    })
    .include(alongside)
    .commit();
  return outcome.written;
}

/**
 * A rollout reached an inactive tenant: the version waits as its pending template, which its
 * activation applies (as a tenant created inactive with a template gets it), with `alongside` (its
 * place in the fleet, the rollout's outcome), together. `false` when the tenant was activated or
 * deleted since it was read, or waits for another template (its first).
 */
export async function markRolloutPending(
  tenant: TenantRecord,
  pending: { templateId: number; version: number },
  alongside: Alongside,
): Promise<boolean> {
  const outcome = await transaction<'tenant' | AlongsideName>()
    .add('tenant', {
      Update: {
        TableName: tableName(),
        Key: stored.tenant.key(tenant),
        UpdateExpression: 'SET pendingTemplate = :pending',
        ConditionExpression:
          'attribute_exists(pk) AND attribute_not_exists(deletedAt) AND ativo = :inactive AND ' +
          '(attribute_not_exists(pendingTemplate) OR pendingTemplate.templateId = :templateId)',
        ExpressionAttributeValues: {
          ':pending': { ...pending, since: new Date().toISOString() },
          ':inactive': false,
          ':templateId': pending.templateId,
        },
      },
    })
    .include(alongside)
    .commit();
  return outcome.written;
}

/**
 * Drops the tenant's pending template (it was deleted before it could be applied), and the
 * follow-up that would apply it, with `alongside`, together.
 */
export async function dropPendingTemplate(tenant: TenantRecord, alongside: Alongside): Promise<void> {
  const templateId = tenant.pendingTemplate?.templateId;
  await transaction<'tenant' | AlongsideName>()
    .add('tenant', {
      Update: {
        TableName: tableName(),
        Key: stored.tenant.key(tenant),
        UpdateExpression: 'REMOVE pendingTemplate',
        ConditionExpression: 'pendingTemplate.templateId = :templateId',
        ExpressionAttributeValues: { ':templateId': templateId },
      },
    })
    .include([
      clearFollowUp({ kind: 'provision', ownerId: tenant.tenantId, subjectId: tenant.tenantId }),
      // It leaves the deleted template's fleet.
      memberDelete(tenant.tenantId),
      ...alongside,
    ])
    .commit();
}

/**
 * Writes the tenant's client-set fields (name, development_variables, scheduling granularity) as
 * `next` has them, if the tenant is as read; going back to hours also needs no schedule with Minute
 * triggers (its count is kept with each schedule write). `false` otherwise.
 */
export async function updateTenantFields(tenant: TenantRecord, next: TenantRecord): Promise<boolean> {
  const toHours = next.schedulingGranularity === 'hours' && tenant.schedulingGranularity === 'minutes';
  const outcome = await transaction<'tenant'>()
    .add('tenant', {
      Update: {
        TableName: tableName(),
        Key: stored.tenant.key(tenant),
        UpdateExpression: `SET nome = :nome, developmentVariables = :variables, updatedAt = :updatedAt${
          next.schedulingGranularity ? ', schedulingGranularity = :granularity' : ''
        }`,
        ConditionExpression: `${unchangedSinceRead.ConditionExpression} AND updatedAt = :seen${
          toHours ? ' AND (attribute_not_exists(minuteSchedules) OR minuteSchedules <= :zero)' : ''
        }`,
        ExpressionAttributeValues: {
          ...unchangedValues(tenant),
          ':nome': next.nome,
          ':variables': next.developmentVariables,
          ':updatedAt': next.updatedAt,
          ':seen': tenant.updatedAt,
          ...(next.schedulingGranularity ? { ':granularity': next.schedulingGranularity } : {}),
          ...(toHours ? { ':zero': 0 } : {}),
        },
      },
    })
    .commit();
  return outcome.written;
}
