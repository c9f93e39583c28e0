import { Duration, type Stack, Validations } from 'aws-cdk-lib';
import type { DomainName } from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AllowedMethods,
  CachePolicy,
  Distribution,
  HttpVersion,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  type PriceClass,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import { routeTimeoutSeconds } from '#functions/routes.ts';
import { EDGE_REGION, certificateProblems } from './stage.ts';

/** The host integrators, agents and tenant backends call with the edge on: `https://api.<tenantBaseDomain>`. */
export const API_HOST_LABEL = 'api';

export interface ServiceEdgeProps {
  tenantBaseDomain: string;
  /** The API's regional custom domain `*.<tenantBaseDomain>` (ServiceApi), the distribution's origin. */
  tenantDomains: DomainName;
  /** ACM certificate of `*.<tenantBaseDomain>` in us-east-1. */
  certificateArn: string;
  /** The WAF web ACL (EdgeFirewallStack), by ARN. */
  webAclArn: string;
  priceClass: PriceClass;
}

/**
 * The CloudFront distribution every caller goes through when the stage's edge is on, so that the WAF
 * web ACL attached to it sees every request first (docs/operations.md, API throttling). It answers on
 * every tenant domain, `*.<tenantBaseDomain>`, which includes `api.<tenantBaseDomain>`.
 *
 * The origin is the API's regional custom domain for the same wildcard, reached by its regional name
 * (`d-….execute-api.<region>.amazonaws.com`), with the viewer's Host forwarded. CloudFront looks the
 * origin's name up in DNS, but sends the forwarded Host as the TLS server name (SNI) and in the request,
 * and accepts the origin's certificate if it matches that Host: so API Gateway sees `acme-1.<base>`,
 * matches its wildcard domain, and the handlers see the host the caller used (the SSO landing checks the
 * login token's audience against it). Forwarding no Host would break all three: API Gateway would get
 * its own regional name, which no API domain is called. No DNS record is needed for the origin.
 *
 * Nothing is cached (every answer depends on the caller's token); all methods, headers, cookies and
 * query strings go through, `Authorization` included (CloudFront forwards it with caching disabled).
 */
export class ServiceEdge {
  readonly distribution: Distribution;

  constructor(stack: Stack, props: ServiceEdgeProps) {
    const problems = certificateProblems(
      props.certificateArn,
      { account: stack.account, region: EDGE_REGION },
      'edgeCertificateArn',
    );
    if (problems.length > 0) throw new Error(problems.join('\n'));
    this.distribution = new Distribution(stack, 'EdgeDistribution', {
      comment: `${stack.stackName}: the API behind the WAF (docs/operations.md, API throttling)`,
      domainNames: [`*.${props.tenantBaseDomain}`],
      certificate: Certificate.fromCertificateArn(stack, 'EdgeCertificate', props.certificateArn),
      minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021,
      httpVersion: HttpVersion.HTTP2_AND_3,
      priceClass: props.priceClass,
      webAclId: props.webAclArn,
      defaultBehavior: {
        origin: new HttpOrigin(props.tenantDomains.regionalDomainName, {
          protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
          originSslProtocols: [OriginSslPolicy.TLS_V1_2],
          // A route may run up to its time-out before API Gateway answers: wait that long, and a little more.
          readTimeout: Duration.seconds(Math.min(60, routeTimeoutSeconds + 5)),
        }),
        viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
        allowedMethods: AllowedMethods.ALLOW_ALL,
        cachePolicy: CachePolicy.CACHING_DISABLED,
        originRequestPolicy: OriginRequestPolicy.ALL_VIEWER,
      },
    });
    Validations.of(this.distribution).acknowledge(
      {
        id: 'AwsSolutions-CFR1',
        reason:
          "No country is refused: integrators, tenants' backends and agents, and tenants' users on the SSO landing may call from anywhere. The web ACL's per-caller rate limits are the edge's control.",
      },
      {
        id: 'AwsSolutions-CFR3',
        reason:
          "No CloudFront access log: the API's access log records every request that reaches it, and the web ACL's metrics and sampled requests show what the edge refused (docs/operations.md, API throttling).",
      },
    );
  }
}
