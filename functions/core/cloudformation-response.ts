import type { CloudFormationCustomResourceEvent } from 'aws-lambda';

/** What a custom resource's function tells CloudFormation of one request. */
export interface CustomResourceOutcome {
  status: 'SUCCESS' | 'FAILED';
  /** Shown in the stack's events: for a failure, why. */
  reason: string;
  /** The same on every request for the same resource: a new one would make CloudFormation delete the old. */
  physicalResourceId: string;
}

/**
 * Answers CloudFormation at the request's pre-signed `ResponseURL`, with the fields it requires
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/crpg-ref-responses.html). A custom
 * resource's function answers every request this way, failure included: one that never answers holds
 * the deploy for an hour.
 */
export async function respondToCloudFormation(
  event: CloudFormationCustomResourceEvent,
  outcome: CustomResourceOutcome,
): Promise<void> {
  const answer = await fetch(event.ResponseURL, {
    method: 'PUT',
    // CloudFormation's pre-signed URL is signed for no content type.
    headers: { 'content-type': '' },
    body: JSON.stringify({
      Status: outcome.status,
      // The whole body may be 4,096 bytes at most; the ids take a few hundred of them.
      Reason: outcome.reason.slice(0, 1000),
      PhysicalResourceId: outcome.physicalResourceId,
      StackId: event.StackId,
      RequestId: event.RequestId,
      LogicalResourceId: event.LogicalResourceId,
    }),
  });
  if (!answer.ok) throw new Error(`CloudFormation's response URL answered ${answer.status}`);
}
