import type { CloudFormationCustomResourceEvent } from 'aws-lambda';
import { logger } from './observability/logger.ts';

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

/** What one custom resource does: its id, its work on Create and Update, and what a failure may say. */
export interface CustomResource {
  /** The resource's physical id, from its properties (the same on every request: see CustomResourceOutcome). */
  physicalResourceId: (event: CloudFormationCustomResourceEvent) => string;
  /** Creates or updates what the resource stands for; answers the reason CloudFormation shows for a success. */
  work: (event: CloudFormationCustomResourceEvent) => Promise<string>;
  /** The answer to a Delete, which does nothing: what the work made goes with its own resource. */
  deleteReason: string;
  /** What failed, for the log (`<failure> failed`) and the reason (`<failure> in <id> failed: …`). */
  failure: string;
  /** What an error may say: by default its message (a resource whose errors can quote secrets names them instead). */
  problemOf?: (error: unknown) => string;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * A custom resource's function: runs `work` on Create and Update, nothing on Delete, and answers
 * CloudFormation every time, failure included, so a deploy never waits on it.
 */
export function customResourceHandler(resource: CustomResource): (event: CloudFormationCustomResourceEvent) => Promise<void> {
  return async (event) => {
    const physicalResourceId = resource.physicalResourceId(event);
    let outcome: CustomResourceOutcome = { status: 'SUCCESS', reason: resource.deleteReason, physicalResourceId };
    try {
      if (event.RequestType !== 'Delete') outcome = { ...outcome, reason: await resource.work(event) };
    } catch (error) {
      const problem = (resource.problemOf ?? messageOf)(error);
      logger.error(`${resource.failure} failed`, { physicalResourceId, problem });
      outcome = { ...outcome, status: 'FAILED', reason: `${resource.failure} in ${physicalResourceId} failed: ${problem}` };
    }
    await respondToCloudFormation(event, outcome);
  };
}
