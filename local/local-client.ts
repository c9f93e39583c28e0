import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { newToken } from '#functions/core/auth/tokens.ts';
import { findClient } from '#functions/core/clients/client-repository.ts';
import { createClient, rotateClientToken } from '#functions/core/clients/clients.ts';

interface LocalClientState {
  clientId: number;
  token: string;
}

/**
 * The twin's own client. Its token is `preferredToken` (LOCAL_CLIENT_TOKEN) when given, else the
 * one remembered in `stateFile` (so restarts print the same token), else a new one. The table
 * still holds only the token's hash; the state file is a local developer convenience (mode 600).
 */
export async function ensureLocalClient(options: { stateFile?: string; preferredToken?: string }): Promise<LocalClientState> {
  const state =
    options.stateFile && existsSync(options.stateFile)
      ? (JSON.parse(readFileSync(options.stateFile, 'utf8')) as LocalClientState)
      : undefined;
  const token = options.preferredToken ?? state?.token ?? newToken('client');
  const existing = state && (await findClient(state.clientId));
  let clientId: number;
  if (existing) {
    await rotateClientToken(existing.clientId, token);
    clientId = existing.clientId;
  } else {
    clientId = (await createClient('local', token)).client.clientId;
  }
  const current = { clientId, token };
  if (options.stateFile) writeFileSync(options.stateFile, `${JSON.stringify(current)}\n`, { mode: 0o600 });
  return current;
}
