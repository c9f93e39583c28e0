import { Template } from 'aws-cdk-lib/assertions';
import { serviceStacks } from '#lib/service-app.ts';
import { stageOf } from '#lib/stage.ts';
import { testApp } from './cdk-app.ts';
import { wholeTemplate } from './whole-template.ts';

/** The tenant domains of the test stages. */
export const TEST_BASE_DOMAIN = 'bi.example.com';

/** A complete production stage, edge on (made-up account and certificates), as cdk.json would hold it. */
export const productionStage = {
  account: '123456789012',
  region: 'eu-west-1',
  alarmEmail: 'ops@example.com',
  tenantBaseDomain: TEST_BASE_DOMAIN,
  tenantCertificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/0f1e2d3c',
  edgeCertificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/1a2b3c4d',
  frontEnd: 'none',
  keyAdminRoleArn: 'arn:aws:iam::123456789012:role/KeyAdmin',
};

export const CONNECTION_ARN = 'arn:aws:codeconnections:eu-west-1:123456789012:connection/4f6e8a2c-1b3d-4e5f-8a9b-0c1d2e3f4a5b';
/** The release pipeline's settings (cdk.json's `pipeline`), deploying the two stages of `pipelineStages`. */
export const pipelineSettings = {
  connectionArn: CONNECTION_ARN,
  repository: 'example-org/bi-tenant-admin',
  branch: 'main',
  account: '123456789012',
  region: 'eu-west-1',
  stages: ['preprod', 'prod'],
};
/** Two production stages with the edge on (eu-west-1, and us-east-1 for the edge), as cdk.json would hold them. */
export const pipelineStages = {
  preprod: { ...productionStage, tenantBaseDomain: 'preprod.bi.example.com' },
  prod: productionStage,
};

type Synthesized = ReturnType<typeof synthesize>;
/**
 * The synthesized apps by their settings: the same settings are synthesized once (tests only read them), for every
 * test file of the worker (the infra project's files share their modules, vitest.config.ts).
 */
const synthesized = new Map<string, Synthesized>();

function synthesize(settings: Record<string, unknown>, context: Record<string, unknown>) {
  const app = testApp({ stage: 'prod', stages: { prod: { ...productionStage, ...settings } }, ...context });
  const stacks = serviceStacks(app, stageOf(app));
  return { stacks, service: wholeTemplate(stacks.service), edge: stacks.edge ? Template.fromStack(stacks.edge) : undefined };
}

/**
 * The app of the production stage with `settings` over it, as bin/app.ts builds it (without bundling
 * the functions): its stacks and their templates. A stage that cannot be synthesized throws, each time.
 */
export function synthesizeProduction(settings: Record<string, unknown> = {}, context: Record<string, unknown> = {}): Synthesized {
  // An undefined setting takes the production value away: it must make a key of its own.
  const key = JSON.stringify([settings, context], (_name, value: unknown) => (value === undefined ? '(undefined)' : value));
  const known = synthesized.get(key);
  if (known) return known;
  const made = synthesize(settings, context);
  synthesized.set(key, made);
  return made;
}
