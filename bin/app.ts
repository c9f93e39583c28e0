/**
 * The CDK app. A stage's settings live in cdk.json under `stages.<stage>` (lib/stage.ts):
 * `npx cdk deploy -c stage=prod`; `-c name=value` overrides one for a command.
 */
import { App } from 'aws-cdk-lib';
import { ServiceStack } from '#lib/service-stack.ts';
import { stageOf } from '#lib/stage.ts';

const app = new App();
const stage = stageOf(app, { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION });

new ServiceStack(app, `BiTenantAdmin-${stage.name}`, {
  stage: stage.name,
  ephemeral: stage.ephemeral,
  tenantBaseDomain: stage.tenantBaseDomain,
  tenantCertificateArn: stage.tenantCertificateArn,
  env: stage.env,
});
