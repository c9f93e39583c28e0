import type { Construct } from 'constructs';
import { alarmEmailSetting } from './deployment-settings.ts';
import { EdgeStack } from './edge-stack.ts';
import { edgeSettings } from './edge-settings.ts';
import { ServiceStack } from './service-stack.ts';
import type { Stage } from './stage.ts';
import { routeBuckets } from './throttling.ts';

/**
 * The stacks of one stage: `BiTenantAdmin-<stage>`, and with the edge on `BiTenantAdmin-<stage>-edge` in
 * us-east-1 after it, which takes the API's regional domain (its distributions' origin) and the token keys'
 * secret from it by cross-region references. `scope` is the App (bin/app.ts) or a pipeline's `Stage`
 * (lib/release-pipeline.ts): the stack names are explicit, so both deploy the same CloudFormation stacks
 * (in a `Stage` they would otherwise be prefixed with its name).
 */
export function serviceStacks(scope: Construct, stage: Stage): { service: ServiceStack; edge?: EdgeStack } {
  const name = `BiTenantAdmin-${stage.name}`;
  const withEdge = stage.edge && stage.edgeCertificateArn !== undefined;
  const service = new ServiceStack(scope, name, {
    stackName: name,
    stage: stage.name,
    ephemeral: stage.ephemeral,
    tenantBaseDomain: stage.tenantBaseDomain,
    tenantCertificateArn: stage.tenantCertificateArn,
    edge: withEdge,
    env: stage.env,
    // CDK carries what the edge stack takes to us-east-1 as SSM parameters there.
    crossRegionReferences: withEdge,
  });
  const tenantDomains = service.api.tenantDomains;
  const edge =
    withEdge && stage.edgeCertificateArn && tenantDomains
      ? new EdgeStack(scope, `${name}-edge`, {
          stackName: `${name}-edge`,
          stage: stage.name,
          env: { account: stage.env.account },
          tenantBaseDomain: stage.tenantBaseDomain,
          certificateArn: stage.edgeCertificateArn,
          apiOrigin: tenantDomains.regionalDomainName,
          tokenKeysSecretArn: service.tokenKeys.secret.secretArn,
          acceptUnsignedTokens: service.acceptsUnsignedTokens,
          settings: edgeSettings(scope),
          routeBuckets: routeBuckets(service.settings),
          alarmEmail: alarmEmailSetting(scope),
          crossRegionReferences: true,
        })
      : undefined;
  return { service, edge };
}
