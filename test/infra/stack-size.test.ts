/**
 * The production stage's templates: each within its bound of resources, every function in a nested stack of
 * its area, and what holds data under the logical ids and properties it was first deployed with.
 */
import { readFileSync } from 'node:fs';
import type { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { queueConsumers, routes, timedFunctions } from '#functions/routes.ts';
import { consumerIdOf, functionIdOf } from '#lib/construct-ids.ts';
import { type FunctionArea, functionAreaOf } from '#lib/function-stacks.ts';
import { synthesizeProduction } from '#test/support/stages.ts';

/**
 * CloudFormation's hard limit is 500 resources per template
 * (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/cloudformation-limits.html); each template
 * keeps 100 of them free for what the next features add. The service's root holds 373 since fleet rollouts and
 * the client's events (92 routes, each a route and an integration; 60 alarms): the next routes move the alarms
 * into a nested stack of their own, under new names (an alarm recreated under its old name in another stack
 * would be deleted by the old one's removal), which frees about 65.
 */
const RESOURCES_PER_TEMPLATE = 400;

interface Resource {
  Type: string;
  Properties?: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
}
const resourcesOf = (stack: Stack) => (Template.fromStack(stack).toJSON() as { Resources: Record<string, Resource> }).Resources;

/**
 * What the service's stack held when it was one template (the commit before the nested stacks), for each
 * resource that holds data: the table and its key, the queues and their dead-letter queues, the payload
 * bucket, the keyrings' secrets. The same logical id and type keep the resource on deployment.
 */
const stateful = JSON.parse(readFileSync(new URL('./fixtures/stateful-resources.json', import.meta.url), 'utf8')) as Record<
  string,
  Resource
>;

/**
 * The properties that may change without replacing the resource (CloudFormation's "Update requires: No
 * interruption"): the key's policy, the table's warm throughput (its indexes' too, within GlobalSecondaryIndexes).
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-kms-key.html
 * https://docs.aws.amazon.com/AWSCloudFormation/latest/TemplateReference/aws-resource-dynamodb-table.html
 */
const changeableInPlace: Record<string, readonly string[]> = {
  'AWS::KMS::Key': ['KeyPolicy'],
  'AWS::DynamoDB::Table': ['WarmThroughput'],
};

function withoutChangeable(resource: Resource): Record<string, unknown> {
  const changeable = changeableInPlace[resource.Type] ?? [];
  const kept = Object.fromEntries(Object.entries(resource.Properties ?? {}).filter(([name]) => !changeable.includes(name)));
  const indexes = kept.GlobalSecondaryIndexes as Record<string, unknown>[] | undefined;
  if (indexes && changeable.includes('WarmThroughput'))
    kept.GlobalSecondaryIndexes = indexes.map(({ WarmThroughput: _warm, ...index }) => index);
  return kept;
}

describe('the production templates', () => {
  const { stacks } = synthesizeProduction();
  const service = stacks.service;
  const nested = [...service.functionStacks.nestedStacks.entries()];

  it(`each hold at most ${RESOURCES_PER_TEMPLATE} resources`, () => {
    const counts = Object.fromEntries([
      [service.stackName, Object.keys(resourcesOf(service)).length],
      ...nested.map(([area, stack]) => [`${service.stackName}/${area}`, Object.keys(resourcesOf(stack)).length]),
      ...(stacks.edge ? [[stacks.edge.stackName, Object.keys(resourcesOf(stacks.edge)).length]] : []),
    ]) as Record<string, number>;
    console.log(`Resources per template (at most ${RESOURCES_PER_TEMPLATE}):`, counts);
    expect(Object.entries(counts).filter(([, count]) => count > RESOURCES_PER_TEMPLATE)).toEqual([]);
  });

  it("puts each function in its area's nested stack, and none in the service's", () => {
    const functionIds = (area?: FunctionArea) => {
      const stack = area ? service.functionStacks.nestedStacks.get(area) : service;
      return stack
        ? Object.entries(resourcesOf(stack))
            .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')
            .map(([id]) => id)
        : [];
    };
    const expected = [
      ...routes.map((route) => ({ id: functionIdOf(route), area: functionAreaOf(route) })),
      ...[...queueConsumers, ...timedFunctions].map((worker) => ({
        id: consumerIdOf(worker.handler),
        area: functionAreaOf(worker),
      })),
    ];
    for (const { id, area } of expected) {
      expect({ id, area, found: functionIds(area).some((logicalId) => logicalId.startsWith(id)) }).toEqual({
        id,
        area,
        found: true,
      });
      expect(functionIds().filter((logicalId) => logicalId.startsWith(id))).toEqual([]);
    }
  });

  it('keeps every resource that holds data under its logical id, type and properties', () => {
    const now = resourcesOf(service);
    for (const [logicalId, before] of Object.entries(stateful)) {
      const after = now[logicalId];
      expect({ logicalId, type: after?.Type }).toEqual({ logicalId, type: before.Type });
      if (!after) continue;
      expect({ logicalId, properties: withoutChangeable(after) }).toEqual({ logicalId, properties: withoutChangeable(before) });
      // Kept on deletion as before, or kept where it was not (a secret of a production stage).
      expect([before.DeletionPolicy, 'Retain']).toContain(after.DeletionPolicy);
    }
  });
});
