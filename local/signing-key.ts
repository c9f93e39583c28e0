import { keyringStore, newSigningKey, rotateKeyring } from '#functions/core/sso/signing-keys.ts';

/** The twin's first start makes a signing key (on AWS, an operator runs `npm run admin -- keys rotate`). */
export async function ensureSigningKey(): Promise<void> {
  const store = keyringStore();
  const keyring = await store.read();
  if (keyring.keys.some((key) => key.retiredAt === undefined)) return;
  await store.write(rotateKeyring(keyring, await newSigningKey()));
}
