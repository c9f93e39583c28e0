import { hashToken, newToken } from '#functions/core/auth/tokens.ts';
import { allocateClientId, type ClientRecord, findClient, insertClient, replaceClientToken } from './client-repository.ts';

/**
 * Creates a client with a new token (signed for its id, allocated first) or the given one
 * (LOCAL_CLIENT_TOKEN), and returns the token, shown only here.
 */
export async function createClient(nome: string, token?: string): Promise<{ client: ClientRecord; token: string }> {
  const clientId = await allocateClientId();
  const chosen = token ?? (await newToken('client', { clientId }));
  const now = new Date().toISOString();
  const client: ClientRecord = { clientId, nome, tokenHash: hashToken(chosen), createdAt: now, updatedAt: now };
  if (!(await insertClient(client, chosen))) throw new Error('That token is already in use');
  return { client, token: chosen };
}

/**
 * Replaces the client's token with a new one (or the given one); the old one stops working in
 * the same transaction. Returns undefined for an unknown client.
 */
export async function rotateClientToken(clientId: number, token?: string): Promise<string | undefined> {
  let chosen = token;
  for (let attempt = 0; attempt < 3; attempt++) {
    const client = await findClient(clientId);
    if (!client) return undefined;
    chosen ??= await newToken('client', { clientId });
    if (hashToken(chosen) === client.tokenHash) return chosen;
    if (await replaceClientToken(client, chosen)) return chosen;
  }
  throw new Error(`Client ${clientId} changed during the rotation; try again`);
}
