/**
 * The service stack's custom resource that puts the first login-token signing key into the keyring
 * secret (lib/signing-keys.ts), so `POST /tenant/login` works from the first deploy with nothing for
 * an operator to run. It makes a key only when the keyring has no active one, with the code of
 * `npm run admin -- keys rotate` (functions/core/sso/signing-keys.ts `ensureSigningKey`): a Create,
 * an Update (the secret replaced) and a retried Create all leave a keyring that has a key as it is,
 * and later rotations stay the operator's. A Delete does nothing: the secret is the stack's to keep
 * or delete.
 *
 * Neither the log nor the answer ever holds key material: only the new key's id, which the JWKS
 * publishes anyway.
 */
import { customResourceHandler } from '#functions/core/cloudformation-response.ts';
import { logger } from '#functions/core/observability/logger.ts';
import { ensureSigningKey } from '#functions/core/sso/signing-keys.ts';

export const handler = customResourceHandler({
  physicalResourceId: (event) => String(event.ResourceProperties.SecretArn),
  async work(event) {
    const kid = await ensureSigningKey();
    const reason = kid ? `First signing key ${kid} made` : 'The keyring already has an active signing key: nothing made';
    logger.info(reason, { secretArn: String(event.ResourceProperties.SecretArn), requestType: event.RequestType });
    return reason;
  },
  deleteReason: 'Nothing to do: the keyring goes with its secret',
  failure: 'Making the first signing key',
  // A keyring that is not JSON fails with a SyntaxError whose message quotes the start of the secret's
  // text, private keys included: that one is named, never quoted.
  problemOf: (error) =>
    error instanceof SyntaxError
      ? 'the keyring secret is not valid JSON'
      : error instanceof Error
        ? error.message
        : String(error),
});
