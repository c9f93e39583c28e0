/** The CDK app. Configure with context: `-c stage=prod -c tenantBaseDomain=bi.example.com`. */
import { App } from 'aws-cdk-lib';
import { ServiceStack } from '#lib/service-stack.ts';

const app = new App();
const stage = String(app.node.tryGetContext('stage') ?? 'dev');
const tenantBaseDomain = String(app.node.tryGetContext('tenantBaseDomain') ?? '');

if (!/^[a-z][a-z0-9-]{0,19}$/.test(stage))
  throw new Error(`Context stage must be lower-case letters, digits and -, not "${stage}"`);
if (!/^(?=.{1,200}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(tenantBaseDomain)) {
  throw new Error(`Context tenantBaseDomain must be a DNS name such as bi.example.com, not "${tenantBaseDomain}"`);
}

const tenantCertificateArn = app.node.tryGetContext('tenantCertificateArn') as string | undefined;

new ServiceStack(app, `BiTenantAdmin-${stage}`, {
  stage,
  tenantBaseDomain,
  tenantCertificateArn,
  env: { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION },
});
