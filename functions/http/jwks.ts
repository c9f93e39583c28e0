import { httpHandler } from '#functions/core/api/http-handler.ts';
import { currentKeyring, jwksOf } from '#functions/core/sso/signing-keys.ts';

/** The public keys that verify login tokens (RFC 7517), cacheable for five minutes. */
export const handler = httpHandler(async () => ({
  status: 200,
  body: JSON.stringify(jwksOf(await currentKeyring())),
  headers: { 'content-type': 'application/jwk-set+json', 'cache-control': 'public, max-age=300' },
}));
