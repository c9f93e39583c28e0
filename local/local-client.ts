import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { screenAuthorization } from '#functions/core/auth/tokens.ts';
import { findClient } from '#functions/core/clients/client-repository.ts';
import { createClient, endPreviousClientToken, rotateClientToken } from '#functions/core/clients/clients.ts';

/** LOCAL_CLIENT_TOKEN names a token this twin would refuse: `npm start` says so in one line. */
export class LocalClientTokenError extends Error {}

interface LocalClientState {
  clientId: number;
  token: string;
}

/** Whether a token remembered from an earlier start still passes the checks before lookup (its key may be gone). */
const stillValid = async (token: string) => !('refused' in (await screenAuthorization(`Bearer ${token}`)));

/**
 * The twin's own client. Its token is `preferredToken` (LOCAL_CLIENT_TOKEN) when given, else the
 * one remembered in `stateFile` (so restarts print the same token) while it still verifies, else a
 * new one, signed for the client's id. The table still holds only the token's hash; the state file
 * is a local developer convenience (mode 600).
 */
export async function ensureLocalClient(options: { stateFile?: string; preferredToken?: string }): Promise<LocalClientState> {
  const state =
    options.stateFile && existsSync(options.stateFile)
      ? (JSON.parse(readFileSync(options.stateFile, 'utf8')) as LocalClientState)
      : undefined;
  if (options.preferredToken !== undefined && !(await stillValid(options.preferredToken)))
    throw new LocalClientTokenError(
      'LOCAL_CLIENT_TOKEN is refused before any lookup: a token of the unsigned form while UNSIGNED_TOKENS=refuse, or a ' +
        'signed one whose key this twin does not have. Unset it to have a token made, or give one of the unsigned form.',
    );
  const remembered = state && (await stillValid(state.token)) ? state.token : undefined;
  const chosen = options.preferredToken ?? remembered;
  const existing = state && (await findClient(state.clientId));
  let current: LocalClientState;
  if (existing) {
    // The twin's client has one token, the one this start prints: the one it replaces stops at once, and so
    // does a previous one an operator's rotation kept (the remembered token itself, after `client rotate-token`).
    await endPreviousClientToken(existing.clientId);
    const rotated = await rotateClientToken(existing.clientId, { token: chosen, previousValidForSeconds: 0 });
    if (rotated === undefined) throw new Error(`Local client ${existing.clientId} disappeared during the start`);
    current = { clientId: existing.clientId, token: rotated.token };
  } else {
    const created = await createClient('local', chosen);
    current = { clientId: created.client.clientId, token: created.token };
  }
  if (options.stateFile) writeFileSync(options.stateFile, `${JSON.stringify(current)}\n`, { mode: 0o600 });
  return current;
}
