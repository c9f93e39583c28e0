/**
 * CloudFormation's own rules hold for every template the service deploys, as aws-cdk-lib checks them at
 * synthesis: its built-in "CloudFormation Validate" plugin reads each template against the resource schemas
 * (unknown properties, wrong types, values out of range, broken references). By default the CDK only warns;
 * cdk.json sets `@aws-cdk/core:validateAgainstDefaultRules`, so a `cdk synth` or `cdk deploy` whose template
 * breaks a rule stops before CloudFormation sees it, rather than failing (and rolling back) half-way through a
 * deploy. The other infrastructure tests synthesize with the check off (`CDK_VALIDATION=false`,
 * vitest.config.ts): it took about 3.5 s of each test file's first synthesis and 1 s of each later one, and
 * answers the same for the same app.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type App, CfnResource, Stack } from 'aws-cdk-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releasePipeline } from '#lib/release-pipeline.ts';
import { serviceStacks } from '#lib/service-app.ts';
import { stageOf } from '#lib/stage.ts';
import { testApp } from '#test/support/cdk-app.ts';
import { pipelineSettings, pipelineStages, productionStage } from '#test/support/stages.ts';

const strictValidation = '@aws-cdk/core:validateAgainstDefaultRules';
const committed = JSON.parse(readFileSync('cdk.json', 'utf8')) as { context: Record<string, unknown> };

// The check is on for this file only.
const off = process.env.CDK_VALIDATION;
beforeAll(() => {
  delete process.env.CDK_VALIDATION;
});
afterAll(() => {
  if (off !== undefined) process.env.CDK_VALIDATION = off;
});

/** The violations the check reported for an app it synthesized: the report is written whenever it runs. */
function violationsOf(app: App): string[] {
  const report = join(app.outdir, 'validation-report.json');
  expect(existsSync(report), 'the validation ran and wrote its report').toBe(true);
  const { pluginReports } = JSON.parse(readFileSync(report, 'utf8')) as {
    pluginReports: { violations: { ruleName: string; description: string }[] }[];
  };
  return pluginReports.flatMap(({ violations }) => violations.map((each) => `${each.ruleName}: ${each.description}`));
}

it('is strict in the committed cdk.json: a template that breaks a rule fails the synth', () => {
  expect(committed.context[strictValidation]).toBe(true);
});

describe('every app the service deploys passes, warnings included', () => {
  it('the committed dev stage, as cdk.json holds it', () => {
    const app = testApp(committed.context);
    serviceStacks(app, stageOf(app, { account: '111111111111', region: 'us-west-2' }));
    app.synth();
    expect(violationsOf(app)).toEqual([]);
  });

  it('a production stage with the edge on (two stacks, the service with its nested stacks)', () => {
    const app = testApp({ [strictValidation]: true, stage: 'prod', stages: { prod: productionStage } });
    const stacks = serviceStacks(app, stageOf(app));
    expect(stacks.edge).toBeDefined();
    app.synth();
    expect(violationsOf(app)).toEqual([]);
  });

  it('the release pipeline, with the stages it deploys', () => {
    const app = testApp({ [strictValidation]: true, pipeline: pipelineSettings, stages: pipelineStages });
    releasePipeline(app);
    app.synth();
    expect(violationsOf(app)).toEqual([]);
  });
});

it('fails the synth on a template that breaks a rule, naming the property (the check is not silent)', () => {
  const app = testApp({ [strictValidation]: true });
  new CfnResource(new Stack(app, 'Broken'), 'Queue', {
    type: 'AWS::SQS::Queue',
    properties: { VisibilityTimeout: 'a while', Colour: 'blue' },
  });
  expect(() => app.synth()).toThrow(/Colour|VisibilityTimeout/);
});
