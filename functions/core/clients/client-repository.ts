import { newTokenWrite } from '#functions/core/auth/token-repository.ts';
import { type OwnedTokens, previousTokenEnd, tokenRotation } from '#functions/core/auth/token-rotation.ts';
import { readCount } from '#functions/core/store/counts.ts';
import { getItem, nextId, queryAll, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { transaction } from '#functions/core/store/transaction.ts';

/** An integrator account. Clients are made by operators (admin CLI), not through the API. */
export interface ClientRecord extends OwnedTokens {
  clientId: number;
  nome: string;
  /** Applied to new tenants created without `templateId` (spec 4.1 step 3). */
  defaultTemplateId?: number;
  createdAt: string;
  updatedAt: string;
}

export const allocateClientId = () => nextId('client');

/**
 * The counts of the client that its quotas bound (quotas.ts), one item each in its partition:
 * `COUNT#TENANTS` (live tenants), `COUNT#TEMPLATES`. Kept by store/counts.ts, in the transactions
 * that create and delete what they count.
 */
export type ClientCountName = 'TENANTS' | 'TEMPLATES';
export const clientCountKey = (clientId: number, name: ClientCountName) => stored.clientCount.key({ clientId, name });

/** How many of a quota's count the client has used. */
export function findClientCount(clientId: number, name: ClientCountName): Promise<number> {
  return readCount(clientCountKey(clientId, name));
}

/**
 * Writes the client and its token together (its counts start with its first tenant and template: a
 * count that does not exist counts nothing, store/counts.ts); `false` when either already exists.
 */
export async function insertClient(client: ClientRecord, token: string): Promise<boolean> {
  const outcome = await transaction<'client' | 'token'>()
    .add('client', {
      Put: {
        TableName: tableName(),
        Item: { ...client, ...stored.client.key(client), ...stored.client.indexEntry(client) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    })
    .add('token', newTokenWrite(token, { kind: 'client', clientId: client.clientId }))
    .commit();
  return outcome.written;
}

export async function findClient(clientId: number): Promise<ClientRecord | undefined> {
  return getItem<ClientRecord>(stored.client.key({ clientId }));
}

/** Every client, oldest first (an operator's listing; clients are few). */
export function listClients(): Promise<ClientRecord[]> {
  return queryAll<ClientRecord>(stored.client.indexes.gsi1.partition({}), '', { index: 'gsi1' });
}

/**
 * Gives the client the token `token`, the old one kept for `previousValidForSeconds` (token-rotation.ts),
 * together: the previous token's expiry when written (null: the old one stopped at once), `changed`
 * when the client's token changed since it was read, `replaced_missing` when the old token's item is
 * gone (nothing left to keep: rotate with no grace).
 */
export async function replaceClientToken(
  client: ClientRecord,
  token: string,
  previousValidForSeconds: number | undefined,
): Promise<{ previousExpiresAt: string | null } | 'changed' | 'replaced_missing'> {
  const rotation = tokenRotation(client, token, { kind: 'client', clientId: client.clientId }, previousValidForSeconds);
  const outcome = await transaction<'client' | 'replacedToken' | 'endedToken' | 'newToken'>()
    .add('client', {
      Update: {
        TableName: tableName(),
        Key: stored.client.key(client),
        UpdateExpression: rotation.ownerUpdate(['updatedAt = :now']),
        ConditionExpression: 'tokenHash = :oldHash',
        ExpressionAttributeValues: { ...rotation.ownerValues, ':oldHash': client.tokenHash, ':now': new Date().toISOString() },
      },
    })
    .add('replacedToken', rotation.replacedToken)
    .add('endedToken', ...rotation.endedTokens)
    .add('newToken', rotation.newToken)
    .commit();
  if (outcome.written) return { previousExpiresAt: rotation.previousExpiresAt };
  if (outcome.failed.has('client')) return 'changed';
  // A token an operator chose (LOCAL_CLIENT_TOKEN) that some owner already has.
  if (outcome.failed.has('newToken')) throw new Error('That token is already in use');
  return 'replaced_missing';
}

/**
 * Ends the client's previous token now: whether it still worked (false too when it had none), or
 * `changed` when its previous token changed since it was read.
 */
export async function endPreviousClientToken(client: ClientRecord): Promise<{ ended: boolean } | 'changed'> {
  const end = previousTokenEnd(client);
  if (!end) return { ended: false };
  const outcome = await transaction<'client' | 'endedToken'>()
    .add('client', {
      Update: {
        TableName: tableName(),
        Key: stored.client.key(client),
        UpdateExpression: end.ownerUpdate(['updatedAt = :now']),
        ConditionExpression: 'previousTokenHash = :previousTokenHash',
        ExpressionAttributeValues: { ...end.ownerValues, ':now': new Date().toISOString() },
      },
    })
    .add('endedToken', end.endedToken)
    .commit();
  return outcome.written ? { ended: end.wasLive } : 'changed';
}
