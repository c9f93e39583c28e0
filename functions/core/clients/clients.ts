import { hashToken, newToken } from '#functions/core/auth/tokens.ts';
import { allocateClientId, type ClientRecord, findClient, insertClient, replaceClientToken } from './client-repository.ts';

/** Creates a client with a new token (or the given one) and returns the token, shown only here. */
export async function createClient(nome: string, token = newToken('client')): Promise<{ client: ClientRecord; token: string }> {
  const clientId = await allocateClientId();
  const now = new Date().toISOString();
  const client: ClientRecord = { clientId, nome, tokenHash: hashToken(token), createdAt: now, updatedAt: now };
  if (!(await insertClient(client, token))) throw new Error('That token is already in use');
  return { client, token };
}

/**
 * Replaces the client's token with a new one (or the given one); the old one stops working in
 * the same transaction. Returns undefined for an unknown client.
 */
export async function rotateClientToken(clientId: number, token = newToken('client')): Promise<string | undefined> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const client = await findClient(clientId);
    if (!client) return undefined;
    if (hashToken(token) === client.tokenHash) return token;
    if (await replaceClientToken(client, token)) return token;
  }
  throw new Error(`Client ${clientId} changed during the rotation; try again`);
}
