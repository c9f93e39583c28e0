import { RemovalPolicy, type Stack, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  ApiMapping,
  type IHttpRouteAuthorizer,
  type CfnStage,
  DomainName,
  HttpApi,
  HttpMethod,
  HttpRoute,
  HttpRouteKey,
  LogGroupLogDestination,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import { ManagedPolicy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { serviceName } from '#functions/core/observability/names.ts';
import { type Route, routeKey, routes, unmatchedRoute } from '#functions/routes.ts';
import { functionIdOf, pascalCase } from './construct-ids.ts';
import { type DeploymentSettings, reservedConcurrency } from './deployment-settings.ts';
import type { FunctionRoles } from './function-roles.ts';
import { type FunctionArea, type FunctionStacks, functionAreaOf } from './function-stacks.ts';
import { chunk } from './monitoring.ts';
import type { PayloadBucket } from './payload-bucket.ts';
import { routeEntry } from './function-bundles.ts';
import { type NamedFunction, ProjectFunction } from './project-function.ts';
import { RoleInvokedLambdaIntegration } from './role-invoked-lambda.ts';
import type { ServiceQueues } from './service-queues.ts';
import type { ServiceTable } from './service-table.ts';
import type { SigningKeys } from './signing-keys.ts';
import type { TokenKeys } from './token-keys.ts';
import { certificateProblems } from './stage.ts';
import { isDefaultBucket, routeBuckets } from './throttling.ts';

/** What making a route's function takes from its row. */
type RouteFunction = Pick<Route, 'handler' | 'table' | 'sends' | 'signingKeys' | 'payloads' | 'packageFiles' | 'auth'>;

/** Function ARNs run to about 120 characters: 40 keep a managed policy well under its 6,144. */
const ARNS_PER_INVOKE_POLICY = 40;

/**
 * What the API access log records per request, as JSON: who, which route, what answer, how fast.
 * No header (so no Authorization, no cookie) and no path: the SSO landing's path carries a login
 * token, and routeKey names the route without it. Each line also names the service and the stage
 * (`accessLogFormat`), the dimensions a metric filter needs to count 429s as the service's metrics
 * are counted (monitoring.ts): a filter's dimensions can only be fields of the line. `requestId` is
 * API Gateway's own: an HTTP API's format takes `$context` variables only, so a caller's X-Request-Id
 * cannot be here; the function's `Request handled` line names both (docs/operations.md, Request ids).
 */
export const apiAccessLogFields = {
  requestId: '$context.requestId',
  requestTime: '$context.requestTime',
  ip: '$context.identity.sourceIp',
  domainName: '$context.domainName',
  routeKey: '$context.routeKey',
  status: '$context.status',
  responseLength: '$context.responseLength',
  latency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  error: '$context.error.message',
  integrationError: '$context.integrationErrorMessage',
};

export const accessLogFormat = (stage: string) => JSON.stringify({ ...apiAccessLogFields, service: serviceName, stage });

export interface ServiceApiProps {
  stage: string;
  tenantBaseDomain: string;
  /** With it, the API also answers on every tenant domain (see ServiceStackProps). */
  tenantCertificateArn?: string;
  /**
   * Turns the API's own `execute-api` address off, so callers cannot go around the edge's WAF by it
   * (the stage's edge is on: lib/edge-stack.ts).
   */
  disableExecuteApiEndpoint?: boolean;
  /**
   * With the edge on: the origin check (lib/origin-secret.ts), on every route, `$default` included, so
   * nothing reaches a function around CloudFront.
   */
  authorizer?: IHttpRouteAuthorizer;
  /** The throttling and reservations (lib/throttling.ts: every route's bucket, every function's reserved concurrency). */
  settings: DeploymentSettings;
  table: ServiceTable;
  queues: ServiceQueues;
  payloads: PayloadBucket;
  signingKeys: SigningKeys;
  tokenKeys: TokenKeys;
  roles: FunctionRoles;
  /** Where each route's function goes, and its live alias (what the route's integration invokes). */
  functionStacks: FunctionStacks;
}

/**
 * The HTTP API and one function per row of the route table. Each handler authenticates its own
 * request (DESIGN.md section 2); the one API Gateway authorizer, with the edge on, only checks that a
 * request came through CloudFront (`authorizer`) and decides nothing about tenants.
 */
export class ServiceApi {
  readonly api: HttpApi;
  readonly accessLogs: LogGroup;
  /** The regional custom domain `*.<tenantBaseDomain>`, with a tenant certificate. */
  readonly tenantDomains?: DomainName;
  /** The route functions, in route table order. */
  readonly functions: NamedFunction[] = [];

  constructor(stack: Stack, props: ServiceApiProps) {
    const { queues, payloads, signingKeys, roles } = props;
    const { settings } = props;
    // Every route's bucket of its own (API Gateway keeps one per route), and the concurrency reserved for its function.
    const buckets = routeBuckets(settings);
    const reservations = reservedConcurrency(settings);
    // The API's one stage, $default, made here rather than by HttpApi (same construct id, so the same
    // resource) to give it throttling (CDK context) and a JSON access log (accessLogFormat). Its default
    // route throttling is the size of each token route's own bucket (apiRateLimit), not a shared pool.
    this.api = new HttpApi(stack, 'Api', {
      apiName: `bi-tenant-admin-${props.stage}`,
      createDefaultStage: false,
      disableExecuteApiEndpoint: props.disableExecuteApiEndpoint ?? false,
      defaultAuthorizer: props.authorizer,
    });
    this.accessLogs = new LogGroup(stack, 'ApiAccessLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const stage = this.api.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle: { rateLimit: settings.apiRateLimit, burstLimit: settings.apiBurstLimit },
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        format: AccessLogFormat.custom(accessLogFormat(props.stage)),
      },
    });
    if (props.tenantCertificateArn) {
      const problems = certificateProblems(props.tenantCertificateArn, stack);
      if (problems.length > 0) throw new Error(problems.join('\n'));
      this.tenantDomains = new DomainName(stack, 'TenantDomains', {
        domainName: `*.${props.tenantBaseDomain}`,
        certificate: Certificate.fromCertificateArn(stack, 'TenantCertificate', props.tenantCertificateArn),
      });
      new ApiMapping(stack, 'TenantDomainMapping', { api: this.api, domainName: this.tenantDomains, stage });
    }
    const environment = {
      ...props.table.environment,
      TENANT_BASE_DOMAIN: props.tenantBaseDomain,
      LOGIN_TOKEN_ISSUER: `bi-tenant-admin:${props.stage}`,
    };

    // API Gateway calls every route's function with this one role (see RoleInvokedLambdaIntegration).
    const apiInvoker = new Role(stack, 'ApiInvokeRole', {
      assumedBy: new ServicePrincipal('apigateway.amazonaws.com'),
      description: 'API Gateway invokes the route functions with this role, and nothing else',
    });
    const aliases: IFunction[] = [];
    const routeFunction = (functionId: string, route: RouteFunction, description: string, key: string, area: FunctionArea) => {
      const sends = route.sends ?? [];
      const fn = new ProjectFunction(props.functionStacks.scopeFor(area), functionId, {
        entry: routeEntry(route.handler),
        description,
        environment: {
          ...environment,
          ...queues.urlVariables(sends),
          ...(route.signingKeys ? signingKeys.environment : {}),
          ...(route.auth.length > 0 ? props.tokenKeys.environment : {}),
          ...payloads.environmentFor(route.payloads),
        },
        role: roles.roleFor({
          table: route.table,
          sends,
          signingKeys: Boolean(route.signingKeys),
          tokenKeys: route.auth.length > 0,
          payloads: route.payloads,
        }),
        packageFiles: route.packageFiles,
        // The anonymous, sign-in and agent routes' functions: guaranteed and capped (lib/throttling.ts).
        reservedConcurrency: reservations.get(key),
      });
      this.functions.push({ name: functionId, fn });
      const live = props.functionStacks.live(fn, functionId);
      aliases.push(live);
      return new RoleInvokedLambdaIntegration(`${functionId}Integration`, live, apiInvoker);
    };
    const apiRoutes = new Map<string, HttpRoute>();
    for (const route of routes) {
      const functionId = functionIdOf(route);
      const key = routeKey(route);
      const [apiRoute] = this.api.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: routeFunction(
          functionId,
          route,
          `${route.method} ${route.path}: ${route.summary}`,
          key,
          functionAreaOf(route),
        ),
      });
      if (apiRoute) apiRoutes.set(key, apiRoute);
      if (apiRoute)
        Validations.of(apiRoute).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason: route.auth.length
            ? `Authorized in the handler, not by an API Gateway authorizer (DESIGN.md section 2: immediate revocation, no authorizer cache): the route table lets ${route.auth.join(', ')} bearer tokens in.`
            : `Public by design, no token: ${route.summary}. Any check it needs (a login token, a session cookie) is made in the handler.`,
        });
    }

    // What no route matches goes to the $default route, whose function answers 404 or 405 (with Allow)
    // in the error envelope, instead of API Gateway's own {"message":"Not Found"}.
    const unmatched = new HttpRoute(stack, 'DefaultRoute', {
      httpApi: this.api,
      authorizer: props.authorizer,
      routeKey: HttpRouteKey.DEFAULT,
      integration: routeFunction(
        pascalCase(unmatchedRoute.handler),
        unmatchedRoute,
        unmatchedRoute.summary,
        HttpRouteKey.DEFAULT.key,
        functionAreaOf(unmatchedRoute),
      ),
    });
    Validations.of(unmatched).acknowledge({
      id: 'AwsSolutions-APIG4',
      reason: 'Public by design: it only says that no route matches (404) or which methods the path takes (405).',
    });
    apiRoutes.set(HttpRouteKey.DEFAULT.key, unmatched);

    // Route settings size the buckets that are not the stage's default: the anonymous routes' and the hot
    // routes' (docs/operations.md, Route buckets and reserved concurrency). The stage names routes by key,
    // so it must come after them: CloudFormation refuses a setting for a route that does not exist yet.
    const ownBuckets = Object.entries(buckets).filter(([, bucket]) => !isDefaultBucket(bucket));
    const cfnStage = stage.node.defaultChild as CfnStage;
    cfnStage.routeSettings = Object.fromEntries(
      ownBuckets.map(([key, bucket]) => [
        key,
        // Raw CloudFormation (the property is untyped JSON), so CloudFormation's own casing.
        { ThrottlingRateLimit: bucket.rateLimit, ThrottlingBurstLimit: bucket.burstLimit },
      ]),
    );
    for (const [key] of ownBuckets) {
      const route = apiRoutes.get(key);
      if (!route) throw new Error(`No API route ${key} for its throttling`);
      stage.node.addDependency(route);
    }

    // Exactly the route functions' live aliases, by ARN (no `:*`: no other version or alias may be invoked), in
    // customer managed policies of at most 40 ARNs each, well within a policy's 6,144 characters.
    for (const [index, functions] of chunk(aliases, ARNS_PER_INVOKE_POLICY).entries()) {
      new ManagedPolicy(stack, `ApiInvokePolicy${index + 1}`, {
        description: `Lets API Gateway invoke route functions (part ${index + 1})`,
        roles: [apiInvoker],
        statements: [
          new PolicyStatement({ actions: ['lambda:InvokeFunction'], resources: functions.map((alias) => alias.functionArn) }),
        ],
      });
    }
  }
}
