import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, getAll, type Page, queryPage, tableName, writeItem } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import type { NamedItem } from '#functions/core/store/transaction.ts';

/**
 * A template's fleet: the tenants that have it, each with the version it runs. A tenant has the
 * template it last applied, or the one it waits for (created inactive with it, or left pending by a
 * rollout until its activation); `templateVersion` is 0 while it has none of its versions yet.
 */
export interface TemplateMember {
  tenantId: number;
  clientId: number;
  templateId: number;
  templateVersion: number;
  /** An apply of the template waits for the tenant's activation (or for its provisioning to finish). */
  pending: boolean;
}

/** The name a member's write takes in the transactions that change it. */
export type MemberWrite = NamedItem<'templateMember'>;

/** Puts the tenant's member item (its index entry with it), for the transaction that changes what it has. */
export function memberPut(member: TemplateMember): MemberWrite {
  return {
    name: 'templateMember',
    item: {
      Put: {
        TableName: tableName(),
        Item: { ...stored.templateMember.key(member), ...stored.templateMember.indexEntry(member), ...member },
      },
    },
  };
}

/** Puts the tenant's member item unless it has one (which is newer: a stored-data migration's write). */
export function putMemberIfAbsent(member: TemplateMember): Promise<boolean> {
  const item = { ...stored.templateMember.key(member), ...stored.templateMember.indexEntry(member), ...member };
  return writeItem({ Put: { TableName: tableName(), Item: item, ConditionExpression: 'attribute_not_exists(pk)' } });
}

/** Marks the tenant's member item pending (a rollout left the apply to its activation), keeping the version it runs. */
export function memberPending(member: Omit<TemplateMember, 'pending'>): MemberWrite {
  return memberPut({ ...member, pending: true });
}

/**
 * Removes the tenant's member item: the tenant is deleted, or the template it waited for was (while a
 * tenant waits for a template, that template is the one it has: no other applies meanwhile).
 */
export function memberDelete(tenantId: number): MemberWrite {
  return { name: 'templateMember', item: { Delete: { TableName: tableName(), Key: stored.templateMember.key({ tenantId }) } } };
}

/**
 * A page of a template's fleet, by version then tenant id; `belowVersion`: only the tenants on an
 * earlier version (or none yet). One Query of the fleet's index partition.
 */
export function listFleetPage(
  clientId: number,
  templateId: number,
  options: { belowVersion?: number | undefined; limit: number; cursor: string | undefined },
): Promise<Page<TemplateMember>> {
  return queryPage<TemplateMember>({
    index: 'gsi1',
    partition: stored.templateMember.indexes.gsi1.partition({ clientId, templateId }),
    ...(options.belowVersion === undefined
      ? {}
      : { below: stored.templateMember.indexes.gsi1.keyPrefix({ templateVersion: options.belowVersion }) }),
    limit: options.limit,
    cursor: options.cursor,
  });
}

/** How many tenants have the template: a count of its fleet's index entries (their keys only are read). */
export async function fleetSize(clientId: number, templateId: number): Promise<number> {
  let total = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': stored.templateMember.indexes.gsi1.partition({ clientId, templateId }) },
        Select: 'COUNT',
        ExclusiveStartKey: startKey,
      }),
    );
    total += page.Count ?? 0;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return total;
}

/** The member items of these tenants (a tenant without one is absent from the answer). */
export function findMembers(tenantIds: readonly number[]): Promise<TemplateMember[]> {
  return getAll<TemplateMember>(tenantIds.map((tenantId) => stored.templateMember.key({ tenantId })));
}
