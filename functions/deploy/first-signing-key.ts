/**
 * The service stack's custom resource that puts the first login-token signing key into the keyring
 * secret (lib/signing-keys.ts), so `POST /tenant/login` works from the first deploy with nothing for
 * an operator to run. It makes a key only when the keyring has no active one, with the code of
 * `npm run admin -- keys rotate` (functions/core/sso/signing-keys.ts `ensureSigningKey`): a Create,
 * an Update (the secret replaced) and a retried Create all leave a keyring that has a key as it is,
 * and later rotations stay the operator's. A Delete does nothing: the secret is the stack's to keep
 * or delete.
 *
 * CloudFormation waits for the answer at the pre-signed `ResponseURL`, which it always gets, failure
 * included. Neither the log nor the answer ever holds key material: only the new key's id, which the
 * JWKS publishes anyway.
 */
import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { respondToCloudFormation } from '#functions/core/cloudformation-response.ts';
import { logger } from '#functions/core/observability/logger.ts';
import { ensureSigningKey } from '#functions/core/sso/signing-keys.ts';

/**
 * What a failure may say. A keyring that is not JSON fails with a SyntaxError whose message quotes
 * the start of the secret's text, private keys included: that one is named, never quoted.
 */
const failureText = (error: unknown): string =>
  error instanceof SyntaxError ? 'the keyring secret is not valid JSON' : error instanceof Error ? error.message : String(error);

export async function handler(event: CloudFormationCustomResourceEvent): Promise<void> {
  const secretArn = String(event.ResourceProperties.SecretArn);
  let status: 'SUCCESS' | 'FAILED' = 'SUCCESS';
  let reason = 'Nothing to do: the keyring goes with its secret';
  try {
    if (event.RequestType !== 'Delete') {
      const kid = await ensureSigningKey();
      reason = kid ? `First signing key ${kid} made` : 'The keyring already has an active signing key: nothing made';
      logger.info(reason, { secretArn, requestType: event.RequestType });
    }
  } catch (error) {
    const problem = failureText(error);
    logger.error('Making the first signing key failed', { secretArn, problem });
    status = 'FAILED';
    reason = `Making the first signing key in ${secretArn} failed: ${problem}`;
  }
  await respondToCloudFormation(event, { status, reason, physicalResourceId: secretArn });
}
