import { rotateTokenKeyring, tokenKeyStore } from '#functions/core/auth/token-keys.ts';

/**
 * The twin's first start makes a token key (TOKEN_KEYS_FILE, mode 600), as the stack's secret is
 * made with one on AWS; later starts keep the keys there, so tokens minted before still verify.
 */
export async function ensureTokenKeys(): Promise<void> {
  const store = tokenKeyStore();
  const keyring = await store.read();
  if (keyring.current !== undefined && keyring.keys[keyring.current] !== undefined) return;
  await store.write(rotateTokenKeyring(keyring).keyring);
}
