import { type App, Aws, DefaultStackSynthesizer, Stack, Stage } from 'aws-cdk-lib';
import { BuildSpec } from 'aws-cdk-lib/aws-codebuild';
import { PipelineType } from 'aws-cdk-lib/aws-codepipeline';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { RegionInfo } from 'aws-cdk-lib/region-info';
import { CodeBuildStep, CodePipeline, CodePipelineSource, ManualApprovalStep, ShellStep } from 'aws-cdk-lib/pipelines';
import type { Construct } from 'constructs';
import { serviceStacks } from './service-app.ts';
import { accountPattern, regionPattern, stageOf } from './stage.ts';

/**
 * The release pipeline (bin/pipeline.ts, docs/operations.md, Release and roll back): CDK Pipelines on
 * CodePipeline. It synthesizes once (lint, then the cloud assembly of every stage), then deploys the
 * stages of `pipeline.stages` in order, each after a manual approval but the first, and runs the smoke
 * check against each once deployed. Its settings are the `pipeline` object of cdk.json's context.
 */
export interface ReleasePipelineSettings {
  /** The CodeConnections (formerly CodeStar Connections) connection to the repository's host. */
  connectionArn: string;
  /** `owner/name` on that host. */
  repository: string;
  /** The branch whose every push is released. */
  branch: string;
  /** Where the pipeline itself lives. */
  account: string;
  region: string;
  /** Stages of `stages` in cdk.json, in release order: the first is pre-production. */
  stages: string[];
}

/** The pipeline's stack. No stage name can make it (`BiTenantAdmin-<stage>`: stage names are lower-case). */
export const PIPELINE_STACK_NAME = 'BiTenantAdminPipeline';

/** The pipeline's source action: `--source-revisions actionName=Source,…` releases a given commit. */
export const SOURCE_ACTION = 'Source';

/** The pipeline's own CDK app: what the synth step runs, and what an operator deploys it with once. */
export const PIPELINE_APP = 'npx tsx bin/pipeline.ts';

/** The Node.js of every CodeBuild step: the functions' runtime (lib/project-function.ts), past the engines' 20.19. */
// https://docs.aws.amazon.com/codebuild/latest/userguide/available-runtimes.html (Ubuntu standard:7.0, CDK Pipelines' image).
const NODE_MAJOR = 22;

const connectionArnPattern =
  /^arn:aws[a-z-]*:(codeconnections|codestar-connections):[a-z0-9-]+:\d{12}:connection\/[A-Za-z0-9-]+$/;
/** What CodePipelineSource.connection takes: `owner/name`, or GitLab's `group/subgroup/…/name`. */
const repositoryPattern = /^[^/\s]+(\/[^/\s]+)+$/;
const branchPattern = /^[^\s~^:?*[\\]+$/;

/**
 * Reads and checks the `pipeline` context, failing the synth with every problem at once (as lib/stage.ts
 * does for a stage) rather than building a pipeline that cannot fetch its source or deploys a stage nobody
 * declared.
 */
export function releasePipelineSettings(scope: Construct): ReleasePipelineSettings {
  const example =
    '{"connectionArn": "arn:aws:codeconnections:<region>:<account>:connection/<id>", "repository": "<owner>/<name>", ' +
    '"branch": "main", "account": "<12 digits>", "region": "<region>", "stages": ["preprod", "prod"]}';
  const given = scope.node.tryGetContext('pipeline') as unknown;
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    throw new Error(
      `Context pipeline must be an object in cdk.json's context, such as ${example}; it is ${JSON.stringify(given)}`,
    );
  const settings = given as Record<string, unknown>;

  const problems: string[] = [];
  const text = (name: keyof ReleasePipelineSettings, pattern: RegExp, what: string): string => {
    const value = settings[name];
    if (typeof value !== 'string' || !pattern.test(value))
      problems.push(`Context pipeline.${name} must be ${what}, not ${JSON.stringify(value)}`);
    return String(value);
  };
  const connectionArn = text('connectionArn', connectionArnPattern, 'the ARN of a CodeConnections connection');
  const repository = text('repository', repositoryPattern, 'the repository as <owner>/<name>');
  const branch = text('branch', branchPattern, 'a branch name');
  const account = text('account', accountPattern, 'a 12-digit AWS account id');
  const region = text('region', regionPattern, 'an AWS region such as eu-west-1');

  const declared = Object.keys((scope.node.tryGetContext('stages') as Record<string, unknown> | undefined) ?? {});
  const stages = settings.stages;
  if (!Array.isArray(stages) || stages.length < 2 || !stages.every((stage) => typeof stage === 'string'))
    problems.push(
      `Context pipeline.stages must list at least two stages, pre-production first (such as ["preprod", "prod"]), not ${JSON.stringify(stages)}`,
    );
  else {
    const unknown = stages.filter((stage) => !declared.includes(stage));
    if (unknown.length > 0)
      problems.push(
        `Context pipeline.stages names ${unknown.join(', ')}, not declared under stages in cdk.json (declared: ${declared.join(', ') || 'none'})`,
      );
    if (new Set(stages).size !== stages.length)
      problems.push(`Context pipeline.stages names a stage twice: ${stages.join(', ')}`);
  }

  if (problems.length > 0) throw new Error(problems.join('\n'));
  return { connectionArn, repository, branch, account, region, stages: stages as string[] };
}

/**
 * One stage of the release: a CDK `Stage` holding the stage's stacks, with the same names as when an
 * operator deploys them (`BiTenantAdmin-<stage>`, lib/service-app.ts), so the pipeline takes over the
 * stacks already deployed. The stage's settings are read as bin/app.ts reads them, with `stage` set on
 * this construct only; a stage that names no account or region (an ephemeral one) deploys beside the
 * pipeline.
 */
function releaseStage(app: App, name: string, pipeline: ReleasePipelineSettings) {
  const stage = new Stage(app, name);
  stage.node.setContext('stage', name);
  const settings = stageOf(stage, { account: pipeline.account, region: pipeline.region });
  serviceStacks(stage, settings);
  const { account = pipeline.account, region = pipeline.region } = settings.env;
  return { stage, name, account, region };
}

/**
 * `npm run smoke -- --stage <name>` against a deployed stage, from the commit being released. It reads the
 * stage's account with the stage's CDK lookup role, which the bootstrap makes read-only (ReadOnlyAccess, and
 * no kms:Decrypt) and has trust its own account and the accounts given to `cdk bootstrap --trust`; this
 * step's policy lets it assume that role, which the SDK does from the build's container credentials
 * (`credential_source = EcsContainer`: https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-role.html).
 */
function smokeCheck(stage: string, where: { account: string; region: string }, source: CodePipelineSource): CodeBuildStep {
  const { account, region } = where;
  const partition = RegionInfo.get(region).partition ?? Aws.PARTITION;
  const lookupRole = `cdk-${DefaultStackSynthesizer.DEFAULT_QUALIFIER}-lookup-role-${account}-${region}`;
  const lookupRoleArn = `arn:${partition}:iam::${account}:role/${lookupRole}`;
  const profile = `profile.${stage}`;
  return new CodeBuildStep('SmokeCheck', {
    input: source,
    rolePolicyStatements: [new PolicyStatement({ actions: ['sts:AssumeRole'], resources: [lookupRoleArn] })],
    commands: [
      'npm ci',
      `aws configure set ${profile}.role_arn ${lookupRoleArn}`,
      `aws configure set ${profile}.credential_source EcsContainer`,
      `aws configure set ${profile}.region ${region}`,
      `AWS_PROFILE=${stage} npm run smoke -- --stage ${stage}`,
    ],
  });
}

/**
 * The pipeline's stack (`BiTenantAdminPipeline`, in `pipeline.account` and `pipeline.region`). Every stage's
 * stacks are synthesized here too, so a stage with bad settings fails this synth as it fails bin/app.ts's.
 */
export function releasePipeline(app: App): Stack {
  const settings = releasePipelineSettings(app);
  const stack = new Stack(app, PIPELINE_STACK_NAME, { env: { account: settings.account, region: settings.region } });
  // A fixed action name: a release of an older commit names it (docs/operations.md, Release and roll back).
  const source = CodePipelineSource.connection(settings.repository, settings.branch, {
    connectionArn: settings.connectionArn,
    actionName: SOURCE_ACTION,
  });
  const stages = settings.stages.map((name) => releaseStage(app, name, settings));
  // Artifacts read by another account must be encrypted with a key that account may use.
  const crossAccount = stages.some((stage) => stage.account !== settings.account);
  const pipeline = new CodePipeline(stack, 'Pipeline', {
    pipelineName: 'BiTenantAdmin',
    pipelineType: PipelineType.V2,
    crossAccountKeys: crossAccount,
    enableKeyRotation: crossAccount,
    // About 90 function bundles and nested templates per stage: one publishing project for all of them,
    // rather than one CodeBuild project (and pipeline action) each.
    publishAssetsInParallel: false,
    codeBuildDefaults: {
      partialBuildSpec: BuildSpec.fromObject({ phases: { install: { 'runtime-versions': { nodejs: NODE_MAJOR } } } }),
    },
    synth: new ShellStep('Synth', {
      input: source,
      commands: ['npm ci', 'npm run lint', `npx cdk synth -a "${PIPELINE_APP}"`],
    }),
  });
  stages.forEach(({ stage, name, account, region }, index) =>
    pipeline.addStage(stage, {
      pre:
        index === 0
          ? []
          : [
              new ManualApprovalStep('Approve', {
                comment: `${settings.stages[index - 1]} is deployed and passed its smoke check: deploy the same commit to ${name}?`,
              }),
            ],
      post: [smokeCheck(name, { account, region }, source)],
    }),
  );
  return stack;
}
