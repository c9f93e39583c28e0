/**
 * The edge stack's custom resource that puts the token keys into the viewer function's KeyValueStore
 * when the store is made (and again when the store or the secret changes): the first key exists from
 * the first deploy, with nothing for an operator to run. Later rotations write the store themselves
 * (`npm run admin -- token-keys rotate`). Deleting the resource leaves the store to its own deletion.
 *
 * CloudFormation invokes it directly and waits for the answer at the pre-signed `ResponseURL`, which
 * it always gets, failure included, so a deploy never hangs on it
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/crpg-ref-responses.html).
 */
import { syncTokenKeysToKeyValueStore } from '#functions/core/auth/token-keys-kvs.ts';
import { customResourceHandler } from '#functions/core/cloudformation-response.ts';
import { logger } from '#functions/core/observability/logger.ts';

export const handler = customResourceHandler({
  physicalResourceId: (event) => String(event.ResourceProperties.KeyValueStoreArn),
  async work(event) {
    const kvsArn = String(event.ResourceProperties.KeyValueStoreArn);
    const { put } = await syncTokenKeysToKeyValueStore(kvsArn);
    logger.info('Token keys written to the KeyValueStore', { kvsArn, put });
    return 'Token keys written';
  },
  deleteReason: 'Nothing to do: the KeyValueStore goes with its own deletion',
  failure: 'Writing the token keys to the KeyValueStore',
});
