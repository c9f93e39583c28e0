import { Duration, type Stack, Validations } from 'aws-cdk-lib';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AllowedMethods,
  type BehaviorOptions,
  CachePolicy,
  CfnMonitoringSubscription,
  Distribution,
  FunctionEventType,
  HttpVersion,
  type IFunction,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  type PriceClass,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { HttpOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { ORIGIN_HEADER } from '#functions/core/edge/origin-secret.ts';
import { routeTimeoutSeconds } from '#functions/routes.ts';
import type { FrontEnd } from './edge-settings.ts';
import { EDGE_REGION, certificateProblems } from './stage.ts';

/** The host integrators, agents and tenant backends call with the edge on: `https://api.<tenantBaseDomain>`. */
export const API_HOST_LABEL = 'api';
/** What this service serves on the tenant domains, beside a BI front end (the SSO landing and session, the JWKS). */
export const TENANT_DOMAIN_API_PATHS = ['/auth/*', '/.well-known/*'] as const;

export interface EdgeDistributionsProps {
  tenantBaseDomain: string;
  /** The API's regional custom domain (`d-….execute-api.<region>.amazonaws.com`), the API's origin. */
  apiOrigin: string;
  /** ACM certificate of `*.<tenantBaseDomain>` in us-east-1. */
  certificateArn: string;
  webAclArn: string;
  priceClass: PriceClass;
  frontEnd: FrontEnd;
  /** The value CloudFront sends the origin in `x-origin-verify` (a dynamic reference: resolved at deploy). */
  originSecret: ISecret;
  /** The viewer-request function that refuses a forged or malformed bearer token (functions/edge/viewer-request.js). */
  viewerRequest: IFunction;
}

/**
 * The CloudFront distributions every caller goes through when the stage's edge is on, so that the WAF
 * web ACL attached to them sees every request first (docs/operations.md, API throttling):
 *
 * - `api`: `api.<tenantBaseDomain>`, every path to the API; what integrators, tenant backends and agents call.
 * - `tenants` (unless the front end keeps its own distribution): `*.<tenantBaseDomain>`, where tenants' users
 *   sign in; `/auth/*` and `/.well-known/*` go to the API, everything else to the BI front end's origin (or
 *   to the API too, when there is no front end). CloudFront lets a specific name (`api.…`) and a wildcard
 *   covering it live on two distributions of one account, and sends a request to the specific one.
 *
 * The API's origin is its regional custom domain for the same wildcard, reached by its regional name,
 * with the viewer's Host forwarded: CloudFront looks the origin's name up in DNS, but sends the forwarded
 * Host as the TLS server name (SNI) and in the request, so API Gateway sees `acme-1.<base>`, matches its
 * wildcard domain, and the SSO landing sees the host the caller used. CloudFront adds the secret
 * `x-origin-verify` header, which the API's authorizer checks, so that nothing reaches a function around
 * the edge, and `CloudFront-Viewer-Address`, the caller's address, which the functions log.
 *
 * Nothing of the API is cached (every answer depends on the caller's token); all methods, headers,
 * cookies and query strings go through. IPv6 is off: WAF counts per address, and an IPv6 caller has a
 * whole /64 of them; over IPv4 an address is one NAT at most.
 */
export class EdgeDistributions {
  readonly api: Distribution;
  readonly tenants?: Distribution;

  constructor(stack: Stack, props: EdgeDistributionsProps) {
    const problems = certificateProblems(
      props.certificateArn,
      { account: stack.account, region: EDGE_REGION },
      'edgeCertificateArn',
    );
    if (problems.length > 0) throw new Error(problems.join('\n'));
    const certificate = Certificate.fromCertificateArn(stack, 'EdgeCertificate', props.certificateArn);

    const apiBehavior: BehaviorOptions = {
      origin: new HttpOrigin(props.apiOrigin, {
        protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
        originSslProtocols: [OriginSslPolicy.TLS_V1_2],
        // A route may run up to its time-out before API Gateway answers: wait that long, and a little more.
        readTimeout: Duration.seconds(Math.min(60, routeTimeoutSeconds + 5)),
        // Resolved by CloudFormation at deploy (the template holds a reference, not the value:
        // https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/dynamic-references-secretsmanager.html); the
        // rotation (functions/edge/origin-secret-rotation.ts) sets each new value here itself.
        customHeaders: { [ORIGIN_HEADER]: props.originSecret.secretValue.unsafeUnwrap() },
      }),
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      allowedMethods: AllowedMethods.ALLOW_ALL,
      cachePolicy: CachePolicy.CACHING_DISABLED,
      // Everything the viewer sent (Host included) and CloudFront's own headers (CloudFront-Viewer-Address:
      // https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/using-managed-origin-request-policies.html).
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_AND_CLOUDFRONT_2022,
      functionAssociations: [{ function: props.viewerRequest, eventType: FunctionEventType.VIEWER_REQUEST }],
    };
    const common = {
      certificate,
      minimumProtocolVersion: SecurityPolicyProtocol.TLS_V1_2_2021,
      httpVersion: HttpVersion.HTTP2_AND_3,
      enableIpv6: false,
      priceClass: props.priceClass,
      webAclId: props.webAclArn,
    };

    this.api = new Distribution(stack, 'ApiDistribution', {
      ...common,
      comment: `${stack.stackName}: the API for integrators, backends and agents (docs/operations.md, API throttling)`,
      domainNames: [`${API_HOST_LABEL}.${props.tenantBaseDomain}`],
      defaultBehavior: apiBehavior,
    });
    const { frontEnd } = props;
    if (frontEnd === 'none' || 'origin' in frontEnd) {
      this.tenants = new Distribution(stack, 'TenantDistribution', {
        ...common,
        comment: `${stack.stackName}: the tenant domains, SSO on /auth/* (docs/operations.md, Tenant domains)`,
        domainNames: [`*.${props.tenantBaseDomain}`],
        defaultBehavior:
          frontEnd === 'none'
            ? apiBehavior
            : {
                // The BI front end, as it is served today: its own cache headers decide what is cached.
                origin: new HttpOrigin(frontEnd.origin, {
                  protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
                  originSslProtocols: [OriginSslPolicy.TLS_V1_2],
                }),
                viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                allowedMethods: AllowedMethods.ALLOW_ALL,
                cachePolicy: CachePolicy.USE_ORIGIN_CACHE_CONTROL_HEADERS_QUERY_STRINGS,
                originRequestPolicy: OriginRequestPolicy.ALL_VIEWER,
              },
        additionalBehaviors:
          frontEnd === 'none' ? {} : Object.fromEntries(TENANT_DOMAIN_API_PATHS.map((pattern) => [pattern, apiBehavior])),
      });
    }

    for (const [id, distribution] of this.all()) {
      // CloudFront's additional metrics, OriginLatency among them (the origin-latency alarm reads it:
      // https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/viewing-cloudfront-metrics.html).
      new CfnMonitoringSubscription(stack, `${id}Metrics`, {
        distributionId: distribution.distributionId,
        monitoringSubscription: { realtimeMetricsSubscriptionConfig: { realtimeMetricsSubscriptionStatus: 'Enabled' } },
      });
      Validations.of(distribution).acknowledge(
        {
          id: 'AwsSolutions-CFR1',
          reason:
            "No country is refused: integrators, tenants' backends and agents, and tenants' users on the SSO landing may call from anywhere. The web ACL's rate limits and the IP reputation list are the edge's controls.",
        },
        {
          id: 'AwsSolutions-CFR3',
          reason:
            "No CloudFront access log: the API's access log records every request that reaches it, with the caller's address in the functions' request lines (CloudFront-Viewer-Address), and the WAF log records what the edge refused (docs/operations.md, API throttling).",
        },
      );
    }
  }

  /** The distributions with their construct ids. */
  all(): [string, Distribution][] {
    return [
      ['ApiDistribution', this.api],
      ...(this.tenants ? [['TenantDistribution', this.tenants] as [string, Distribution]] : []),
    ];
  }
}
