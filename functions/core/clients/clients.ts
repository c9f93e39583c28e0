import type { TokenRotated } from '#functions/core/auth/token-rotation.ts';
import { hashToken, newToken } from '#functions/core/auth/tokens.ts';
import {
  allocateClientId,
  type ClientRecord,
  endPreviousClientToken as endPrevious,
  findClient,
  insertClient,
  replaceClientToken,
} from './client-repository.ts';

/**
 * Creates a client with a new token (signed for its id, allocated first) or the given one
 * (LOCAL_CLIENT_TOKEN), and returns the token, shown only here.
 */
export async function createClient(nome: string, token?: string): Promise<{ client: ClientRecord; token: string }> {
  const clientId = await allocateClientId();
  const chosen = token ?? (await newToken('client', { clientId }));
  const now = new Date().toISOString();
  const client: ClientRecord = {
    clientId,
    nome,
    tokenHash: hashToken(chosen),
    tokensLastUsedAt: {},
    createdAt: now,
    updatedAt: now,
  };
  if (!(await insertClient(client, chosen))) throw new Error('That token is already in use');
  return { client, token: chosen };
}

/**
 * Replaces the client's token with a new one (or the given one); the old one keeps working for
 * `previousValidForSeconds` (a day when not given, 0: it stops in the same transaction) and ends
 * the previous token an earlier rotation kept. Returns undefined for an unknown client; the given
 * token when it already is the client's changes nothing.
 */
export async function rotateClientToken(
  clientId: number,
  options: { token?: string; previousValidForSeconds?: number } = {},
): Promise<TokenRotated | undefined> {
  let chosen = options.token;
  let grace = options.previousValidForSeconds;
  for (let attempt = 0; attempt < 3; attempt++) {
    const client = await findClient(clientId);
    if (!client) return undefined;
    chosen ??= await newToken('client', { clientId });
    if (hashToken(chosen) === client.tokenHash) return { id: clientId, token: chosen, previousExpiresAt: null };
    const outcome = await replaceClientToken(client, chosen, grace);
    if (typeof outcome === 'object') return { id: clientId, token: chosen, ...outcome };
    // The old token's item is gone: there is nothing left to keep working.
    if (outcome === 'replaced_missing') grace = 0;
  }
  throw new Error(`Client ${clientId} changed during the rotation; try again`);
}

/** Ends the client's previous token now: whether one still worked; undefined for an unknown client. */
export async function endPreviousClientToken(clientId: number): Promise<{ ended: boolean } | undefined> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const client = await findClient(clientId);
    if (!client) return undefined;
    const outcome = await endPrevious(client);
    if (outcome !== 'changed') return outcome;
  }
  throw new Error(`Client ${clientId} changed while its previous token was ended; try again`);
}
