import type { App } from 'aws-cdk-lib';
import { alarmEmailSetting, edgeSettings } from './deployment-settings.ts';
import { EdgeFirewallStack } from './edge-firewall-stack.ts';
import { ServiceStack } from './service-stack.ts';
import type { Stage } from './stage.ts';

/**
 * The stacks of one stage (bin/app.ts): `BiTenantAdmin-<stage>`, and with the edge on
 * `BiTenantAdmin-<stage>-edge` in us-east-1 first, whose web ACL's ARN the service's distribution takes.
 */
export function serviceStacks(app: App, stage: Stage): { service: ServiceStack; edge?: EdgeFirewallStack } {
  const name = `BiTenantAdmin-${stage.name}`;
  const edge =
    stage.edge && stage.edgeCertificateArn
      ? new EdgeFirewallStack(app, `${name}-edge`, {
          stage: stage.name,
          env: { account: stage.env.account },
          limits: edgeSettings(app),
          alarmEmail: alarmEmailSetting(app),
          crossRegionReferences: true,
        })
      : undefined;
  const service = new ServiceStack(app, name, {
    stage: stage.name,
    ephemeral: stage.ephemeral,
    tenantBaseDomain: stage.tenantBaseDomain,
    tenantCertificateArn: stage.tenantCertificateArn,
    edge:
      edge && stage.edgeCertificateArn ? { certificateArn: stage.edgeCertificateArn, webAclArn: edge.webAcl.attrArn } : undefined,
    env: stage.env,
    // The web ACL's ARN comes from us-east-1; CDK carries it over with an SSM parameter in the stage's region.
    crossRegionReferences: edge !== undefined,
  });
  return { service, edge };
}
