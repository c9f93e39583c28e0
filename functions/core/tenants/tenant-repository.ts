import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { defaultAgentItems, listAgents } from '#functions/core/agents/agent-repository.ts';
import type { VariableValue } from '#functions/core/api/validators/create-tenant.cjs';
import { newTokenWrite, revokeTokenWrite } from '#functions/core/auth/token-repository.ts';
import { hashToken } from '#functions/core/auth/tokens.ts';
import { db, getAll, getItem, nextId, type Page, queryPage, tableName, transact } from '#functions/core/store/dynamo.ts';
import { keys } from '#functions/core/store/keys.ts';
import { conflict, notFound } from '#functions/core/errors.ts';
import type { SchedulingGranularity } from '#functions/core/schedules/schedule-file.ts';

export interface TenantRecord {
  tenantId: number;
  clientId: number;
  nome: string;
  ativo: boolean;
  dominio: string;
  developmentVariables: Record<string, VariableValue>;
  /** The template chosen at creation. */
  templateId?: number;
  /** The template version the tenant last finished applying. */
  appliedTemplate?: { templateId: number; version: number; appliedAt: string };
  /** Whether its schedules may use Minute triggers; `hours` when absent. */
  schedulingGranularity?: SchedulingGranularity;
  /** How many of its schedules have Minute triggers (kept with each schedule write). */
  minuteSchedules?: number;
  /** Hash of the current tenant token, so that rotation and deletion can revoke it. */
  tokenHash: string;
  createdAt: string;
  updatedAt: string;
  deletedAt?: string;
}

export const tenantNotFound = () => notFound('Tenant not found');
/** DESIGN 7: an inactive tenant's token still reads, but apply, reload, login and schedules refuse. */
export const tenantInactive = () => conflict('Tenant is inactive', 'tenant_inactive');

const tenantKeys = (tenant: Pick<TenantRecord, 'tenantId' | 'clientId'>) => ({
  ...keys.tenant(tenant.tenantId),
  ...keys.clientTenantsIndex(tenant.clientId, tenant.tenantId),
});

export const allocateTenantId = () => nextId('tenant');

/** Writes the tenant, its token and its default agent together: none exists without the others. */
export async function insertTenant(tenant: TenantRecord, token: string): Promise<void> {
  const written = await transact([
    ...defaultAgentItems(tenant.tenantId, tenant.clientId, tenant.createdAt),
    {
      Put: {
        TableName: tableName(),
        Item: { ...tenant, ...tenantKeys(tenant) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    newTokenWrite(token, { kind: 'tenant', clientId: tenant.clientId, tenantId: tenant.tenantId }),
  ]);
  if (!written) throw new Error(`Tenant ${tenant.tenantId} or its token already exists`);
}

/** Consistent read: a tenant just deleted or rotated is seen as such. */
export async function findTenant(tenantId: number): Promise<TenantRecord | undefined> {
  return getItem<TenantRecord>(keys.tenant(tenantId));
}

/** Several tenants by id in one BatchGetItem per hundred (consistent), by id; missing ones are left out. */
export async function findTenants(tenantIds: readonly number[]): Promise<Map<number, TenantRecord>> {
  const tenants = await getAll<TenantRecord>(tenantIds.map((tenantId) => keys.tenant(tenantId)));
  return new Map(tenants.map((tenant) => [tenant.tenantId, tenant]));
}

export function listClientTenants(clientId: number, limit: number, cursor: string | undefined): Promise<Page<TenantRecord>> {
  return queryPage<TenantRecord>({ index: 'gsi1', partition: keys.clientTenantsIndex(clientId, 0).gsi1pk, limit, cursor });
}

/** Guards every write on a tenant read just before: same owner, not deleted, token unchanged. */
const unchangedSinceRead = {
  ConditionExpression: 'clientId = :clientId AND attribute_not_exists(deletedAt) AND tokenHash = :tokenHash',
};
const unchangedValues = (tenant: TenantRecord) => ({ ':clientId': tenant.clientId, ':tokenHash': tenant.tokenHash });

/**
 * Soft delete: marks the tenant deleted, drops it from the client's list, revokes its token and
 * its agents' tokens, and keeps a billing record, in one transaction (at most 50 agents keep it
 * well under DynamoDB's 100 items). `false` when the tenant changed since it was read.
 */
export async function softDeleteTenant(tenant: TenantRecord, deletedAt: string): Promise<boolean> {
  const agentTokens = (await listAgents(tenant.tenantId)).map((agent) => revokeTokenWrite(agent.tokenHash));
  return transact([
    ...agentTokens,
    {
      Update: {
        TableName: tableName(),
        Key: keys.tenant(tenant.tenantId),
        UpdateExpression: 'SET deletedAt = :deletedAt, updatedAt = :deletedAt REMOVE gsi1pk, gsi1sk',
        ...unchangedSinceRead,
        ExpressionAttributeValues: { ...unchangedValues(tenant), ':deletedAt': deletedAt },
      },
    },
    // Unconditional: the tenant's tokenHash condition above already pins which token this is.
    revokeTokenWrite(tenant.tokenHash),
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...keys.tenantDeletionRecord(tenant.tenantId),
          tenantId: tenant.tenantId,
          clientId: tenant.clientId,
          nome: tenant.nome,
          createdAt: tenant.createdAt,
          deletedAt,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ]);
}

/** Replaces the tenant token: the old one stops resolving in the same transaction. */
export function replaceTenantToken(tenant: TenantRecord, newToken: string, updatedAt: string): Promise<boolean> {
  return transact([
    {
      Update: {
        TableName: tableName(),
        Key: keys.tenant(tenant.tenantId),
        UpdateExpression: 'SET tokenHash = :newHash, updatedAt = :updatedAt',
        ...unchangedSinceRead,
        ExpressionAttributeValues: { ...unchangedValues(tenant), ':newHash': hashToken(newToken), ':updatedAt': updatedAt },
      },
    },
    revokeTokenWrite(tenant.tokenHash),
    newTokenWrite(newToken, { kind: 'tenant', clientId: tenant.clientId, tenantId: tenant.tenantId }),
  ]);
}

/** Sets `ativo`; `undefined` when the tenant was deleted or changed hands since it was read. */
export async function updateTenantActive(
  tenant: TenantRecord,
  ativo: boolean,
  updatedAt: string,
): Promise<TenantRecord | undefined> {
  try {
    const result = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.tenant(tenant.tenantId),
        UpdateExpression: 'SET ativo = :ativo, updatedAt = :updatedAt',
        ConditionExpression: 'clientId = :clientId AND attribute_not_exists(deletedAt)',
        ExpressionAttributeValues: { ':clientId': tenant.clientId, ':ativo': ativo, ':updatedAt': updatedAt },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return result.Attributes as TenantRecord;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}
