import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { newTokenWrite, revokeTokenWrite } from '../auth/token-repository.ts';
import { hashToken, newToken } from '../auth/tokens.ts';
import { db, nextId, queryAll, tableName, transact } from '../store/dynamo.ts';
import { keys } from '../store/keys.ts';

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

/** Creates a client with a new token (or the given one) and returns the token, shown only here. */
export async function createClient(nome: string, token = newToken('client')): Promise<{ client: ClientRecord; token: string }> {
  const clientId = await nextId('client');
  const now = new Date().toISOString();
  const client: ClientRecord = { clientId, nome, tokenHash: hashToken(token), createdAt: now, updatedAt: now };
  const written = await transact([
    {
      Put: {
        TableName: tableName(),
        Item: { ...client, ...keys.client(clientId), ...keys.clientsIndex(clientId) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    newTokenWrite(token, { kind: 'client', clientId }),
  ]);
  if (!written) throw new Error('That token is already in use');
  return { client, token };
}

export async function findClient(clientId: number): Promise<ClientRecord | undefined> {
  const result = await db().send(new GetCommand({ TableName: tableName(), Key: keys.client(clientId), ConsistentRead: true }));
  return result.Item as ClientRecord | undefined;
}

/** Every client, oldest first (an operator's listing; clients are few). */
export function listClients(): Promise<ClientRecord[]> {
  return queryAll<ClientRecord>(keys.clientsIndex(0).gsi1pk, '', { index: 'gsi1' });
}

/**
 * Replaces the client's token with a new one (or the given one); the old one stops working in
 * the same transaction. Returns undefined for an unknown client.
 */
export async function rotateClientToken(clientId: number, token = newToken('client')): Promise<string | undefined> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const client = await findClient(clientId);
    if (!client) return undefined;
    const newHash = hashToken(token);
    if (newHash === client.tokenHash) return token;
    const written = await transact([
      {
        Update: {
          TableName: tableName(),
          Key: keys.client(clientId),
          UpdateExpression: 'SET tokenHash = :newHash, updatedAt = :now',
          ConditionExpression: 'tokenHash = :oldHash',
          ExpressionAttributeValues: { ':newHash': newHash, ':oldHash': client.tokenHash, ':now': new Date().toISOString() },
        },
      },
      revokeTokenWrite(client.tokenHash),
      newTokenWrite(token, { kind: 'client', clientId }),
    ]);
    if (written) return token;
  }
  throw new Error(`Client ${clientId} changed during the rotation; try again`);
}
