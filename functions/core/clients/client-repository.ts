import { newTokenWrite, revokeTokenWrite } from '#functions/core/auth/token-repository.ts';
import { hashToken } from '#functions/core/auth/tokens.ts';
import { readCount } from '#functions/core/store/counts.ts';
import { getItem, nextId, queryAll, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { transaction } from '#functions/core/store/transaction.ts';

/** An integrator account. Clients are made by operators (admin CLI), not through the API. */
export interface ClientRecord {
  clientId: number;
  nome: string;
  tokenHash: string;
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

/** Gives the client the token `token` and revokes its old one, together; `false` when its token changed since it was read. */
export async function replaceClientToken(client: ClientRecord, token: string): Promise<boolean> {
  const outcome = await transaction<'client' | 'oldToken' | 'newToken'>()
    .add('client', {
      Update: {
        TableName: tableName(),
        Key: stored.client.key(client),
        UpdateExpression: 'SET tokenHash = :newHash, updatedAt = :now',
        ConditionExpression: 'tokenHash = :oldHash',
        ExpressionAttributeValues: {
          ':newHash': hashToken(token),
          ':oldHash': client.tokenHash,
          ':now': new Date().toISOString(),
        },
      },
    })
    .add('oldToken', revokeTokenWrite(client.tokenHash))
    .add('newToken', newTokenWrite(token, { kind: 'client', clientId: client.clientId }))
    .commit();
  return outcome.written;
}
