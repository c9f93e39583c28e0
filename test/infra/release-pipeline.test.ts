/**
 * The release pipeline (lib/release-pipeline.ts, bin/pipeline.ts), asserted on the pipeline stack's
 * template synthesized with made-up settings: where the source comes from, what the synth step runs, the
 * order of the stages and the steps around them, which CloudFormation stacks each stage deploys, and that
 * bad settings are refused at synth. The pipeline (with every stage's stacks) is synthesized once.
 */
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { PIPELINE_APP, SOURCE_ACTION, releasePipeline } from '#lib/release-pipeline.ts';
import { testApp } from '#test/support/cdk-app.ts';
import { CONNECTION_ARN, pipelineSettings, pipelineStages as stages } from '#test/support/stages.ts';

/** The pipeline's stack, as bin/pipeline.ts builds it from this context (without bundling the functions). */
function pipelineStack(context: Record<string, unknown> = { pipeline: pipelineSettings, stages }) {
  return releasePipeline(testApp(context));
}

interface Action {
  Name: string;
  RunOrder: number;
  Region?: string;
  ActionTypeId: { Category: string; Provider: string };
  Configuration?: Record<string, unknown>;
}
interface PipelineStage {
  Name: string;
  Actions: Action[];
}
interface BuildSpec {
  phases: { install?: { 'runtime-versions'?: Record<string, unknown> }; build: { commands: string[] } };
}

let template: Template;
let pipelineStages: PipelineStage[];
beforeAll(() => {
  template = Template.fromStack(pipelineStack());
  const [pipeline] = Object.values(template.findResources('AWS::CodePipeline::Pipeline'));
  pipelineStages = (pipeline?.Properties as { Stages: PipelineStage[] }).Stages;
});

function stageNamed(name: string): PipelineStage {
  const stage = pipelineStages.find((candidate) => candidate.Name === name);
  if (!stage) throw new Error(`No pipeline stage ${name}: ${pipelineStages.map((candidate) => candidate.Name).join(', ')}`);
  return stage;
}

/** What a CodeBuild action of the pipeline runs: its project's build spec. */
function buildSpecOf(action: Action | undefined): BuildSpec {
  const project = (action?.Configuration?.ProjectName as { Ref: string } | undefined)?.Ref ?? '';
  const resource = template.findResources('AWS::CodeBuild::Project')[project];
  if (!resource) throw new Error(`Action ${action?.Name} runs no CodeBuild project of the template`);
  return JSON.parse((resource.Properties as { Source: { BuildSpec: string } }).Source.BuildSpec) as BuildSpec;
}

/** A stage's actions in the order they run, named as CodePipeline shows them. */
function runOrderOf(stage: PipelineStage): string[] {
  return [...stage.Actions].sort((a, b) => a.RunOrder - b.RunOrder).map((action) => action.Name);
}

describe('the release pipeline', () => {
  it('takes its source from the repository through the CodeConnections connection', () => {
    const [source] = stageNamed('Source').Actions;
    expect(source?.Name).toBe(SOURCE_ACTION);
    expect(source?.ActionTypeId).toMatchObject({ Category: 'Source', Provider: 'CodeStarSourceConnection' });
    expect(source?.Configuration).toMatchObject({
      ConnectionArn: CONNECTION_ARN,
      FullRepositoryId: 'example-org/bi-tenant-admin',
      BranchName: 'main',
    });
  });

  it('synthesizes once, after the lint, with the pipeline app, on the functions’ Node.js', () => {
    const synth = stageNamed('Build').Actions.find((action) => action.Name === 'Synth');
    const spec = buildSpecOf(synth);
    expect(spec.phases.build.commands).toEqual(['npm ci', 'npm run lint', `npx cdk synth -a "${PIPELINE_APP}"`]);
    expect(spec.phases.install?.['runtime-versions']).toEqual({ nodejs: 22 });
    // Every later stage deploys this one cloud assembly: no stage synthesizes again.
    const deploys = pipelineStages
      .flatMap((stage) => stage.Actions)
      .filter((action) => action.ActionTypeId.Provider === 'CloudFormation');
    expect(deploys.length).toBe(8);
  });

  it('deploys pre-production, checks it, waits for approval, then deploys production and checks it', () => {
    const names = pipelineStages.map((stage) => stage.Name);
    expect(names.indexOf('preprod')).toBeLessThan(names.indexOf('prod'));
    expect(names.slice(names.indexOf('preprod'))).toEqual(['preprod', 'prod']);
    expect(runOrderOf(stageNamed('preprod'))).toEqual([
      'BiTenantAdmin-preprod.Prepare',
      'BiTenantAdmin-preprod.Deploy',
      'BiTenantAdmin-preprod-edge.Prepare',
      'BiTenantAdmin-preprod-edge.Deploy',
      'SmokeCheck',
    ]);
    expect(runOrderOf(stageNamed('prod'))).toEqual([
      'Approve',
      'BiTenantAdmin-prod.Prepare',
      'BiTenantAdmin-prod.Deploy',
      'BiTenantAdmin-prod-edge.Prepare',
      'BiTenantAdmin-prod-edge.Deploy',
      'SmokeCheck',
    ]);
    const approve = stageNamed('prod').Actions.find((action) => action.Name === 'Approve');
    expect(approve?.ActionTypeId).toMatchObject({ Category: 'Approval', Provider: 'Manual' });
    // No two actions of a stage share a run order: each waits for the one before it.
    for (const stage of [stageNamed('preprod'), stageNamed('prod')])
      expect(new Set(stage.Actions.map((action) => action.RunOrder)).size).toBe(stage.Actions.length);
  });

  it('runs the smoke check of each stage with that stage’s read-only lookup role', () => {
    const lookupRole = 'arn:aws:iam::123456789012:role/cdk-hnb659fds-lookup-role-123456789012-eu-west-1';
    for (const stage of ['preprod', 'prod']) {
      const smoke = stageNamed(stage).Actions.find((action) => action.Name === 'SmokeCheck');
      expect(buildSpecOf(smoke).phases.build.commands).toEqual([
        'npm ci',
        `aws configure set profile.${stage}.role_arn ${lookupRole}`,
        `aws configure set profile.${stage}.credential_source EcsContainer`,
        `aws configure set profile.${stage}.region eu-west-1`,
        `AWS_PROFILE=${stage} npm run smoke -- --stage ${stage}`,
      ]);
    }
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: { Statement: Match.arrayWith([{ Action: 'sts:AssumeRole', Effect: 'Allow', Resource: lookupRole }]) },
    });
  });

  it("deploys production's stacks under the names operators deployed by hand, the edge's in us-east-1", () => {
    const deploys = stageNamed('prod').Actions.filter((action) => action.Name.endsWith('.Deploy'));
    expect(deploys.map((action) => [action.Configuration?.StackName, action.Region])).toEqual([
      ['BiTenantAdmin-prod', undefined],
      ['BiTenantAdmin-prod-edge', 'us-east-1'],
    ]);
  });
});

describe('settings the pipeline refuses', () => {
  const refusals: [string, unknown, Record<string, unknown>, RegExp][] = [
    ['a pipeline that is not an object', 'example-org/bi-tenant-admin', stages, /^Context pipeline must be an object/],
    [
      'a connection that is not one',
      { ...pipelineSettings, connectionArn: 'github.com/example-org' },
      stages,
      /pipeline\.connectionArn/,
    ],
    ['a repository without its owner', { ...pipelineSettings, repository: 'bi-tenant-admin' }, stages, /pipeline\.repository/],
    ['no branch', { ...pipelineSettings, branch: undefined }, stages, /pipeline\.branch/],
    ['an account that is not 12 digits', { ...pipelineSettings, account: '1234' }, stages, /pipeline\.account/],
    ['a region that is not one', { ...pipelineSettings, region: 'Ireland' }, stages, /pipeline\.region/],
    ['one stage only', { ...pipelineSettings, stages: ['prod'] }, stages, /pipeline\.stages must list at least two/],
    ['an undeclared stage', { ...pipelineSettings, stages: ['staging', 'prod'] }, stages, /pipeline\.stages names staging/],
    ['a stage twice', { ...pipelineSettings, stages: ['prod', 'prod'] }, stages, /pipeline\.stages names a stage twice/],
    [
      // A stage is checked as bin/app.ts checks it (lib/stage.ts).
      'a production stage without its alarm e-mail',
      pipelineSettings,
      { ...stages, preprod: { ...stages.preprod, alarmEmail: undefined } },
      /Stage preprod .*missing: alarmEmail/,
    ],
  ];
  it.each(refusals)('%s', (_case, pipeline, declared, message) => {
    expect(() => pipelineStack({ pipeline, stages: declared })).toThrow(message);
  });

  it('no pipeline setting', () => {
    expect(() => pipelineStack({ stages })).toThrow(
      /^Context pipeline must be an object in cdk.json's context, such as \{"connectionArn"/,
    );
  });

  it('names every bad setting at once', () => {
    expect(() => pipelineStack({ pipeline: { ...pipelineSettings, account: '1234', branch: '' }, stages })).toThrow(
      /pipeline\.branch[^\n]*\nContext pipeline\.account/,
    );
  });
});
