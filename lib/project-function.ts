import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { type IRole, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Function as LambdaFunction, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { serviceName } from '#functions/core/observability/names.ts';
import { routeTimeoutSeconds } from '#functions/routes.ts';
import { functionCode } from './function-bundles.ts';

export interface ProjectFunctionProps {
  /** Path of the handler file, relative to the project root. */
  entry: string;
  description: string;
  environment: Record<string, string>;
  /** Default: a route's (routeTimeoutSeconds, under API Gateway's 30 s integration limit). */
  timeoutSeconds?: number;
  /** The execution role, shared by the functions that need exactly the same permissions. */
  role: IRole;
  /** Files of installed packages (`package/file`) copied beside index.mjs, read by the function at run time. */
  packageFiles?: readonly string[];
  /** Concurrency reserved for (and capping) the function; none by default. */
  reservedConcurrency?: number;
}

/** A function of the service under its construct id, for legends, alarm descriptions and errors. */
export interface NamedFunction {
  name: string;
  fn: ProjectFunction;
}

/**
 * Every function of the service: Node.js 22 on arm64, its code bundled by lib/function-bundles.ts (ESM, minified,
 * with source maps), X-Ray tracing, and a log group with a retention. Routes state only their entry.
 */
export class ProjectFunction extends LambdaFunction {
  constructor(scope: Construct, id: string, props: ProjectFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    super(scope, id, {
      code: functionCode(props.entry, props.packageFiles),
      handler: 'index.handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: 512,
      // Locks and idempotency claims last until the function's deadline; every queue's visibility timeout outlives it.
      timeout: Duration.seconds(props.timeoutSeconds ?? routeTimeoutSeconds),
      reservedConcurrentExecutions: props.reservedConcurrency,
      // Each release publishes a version (lib/function-stacks.ts); the one it replaces is deleted once the stack
      // update is done (never during it, so a rolled-back update still has it), rather than kept forever against
      // the account's 75 GB of Lambda code storage.
      currentVersionOptions: { removalPolicy: RemovalPolicy.DESTROY },
      tracing: Tracing.ACTIVE,
      logGroup,
      role: props.role,
      environment: {
        ...props.environment,
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: serviceName,
        POWERTOOLS_LOG_LEVEL: 'INFO',
      },
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 22 is the runtime DESIGN.md section 2 fixes and a supported Lambda runtime; the code is built for node22 ' +
        '(esbuild target) and tested on Node.js 20, so moving to a newer runtime is a deliberate change of its own.',
    });
  }
}

/**
 * A function that shares no permissions with the service's route and queue functions (lib/function-roles.ts):
 * the edge's custom resource, probe and rotation, the origin authorizer. Its role may write its own log
 * group and do what `statements` say, nothing more.
 */
export function functionWithOwnRole(
  scope: Construct,
  id: string,
  props: Omit<ProjectFunctionProps, 'role'> & {
    statements: PolicyStatement[];
    /** Why a statement of `statements` needs the resource `*`, if one does. */
    wildcardReason?: string;
  },
): ProjectFunction {
  const role = new Role(scope, `${id}Role`, {
    assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
    description: props.description,
  });
  const { statements, wildcardReason, ...functionProps } = props;
  // The acknowledgment below covers `*` for X-Ray; any other `*` must say why, or cdk-nag would let it pass unseen.
  if (!wildcardReason && statements.some((statement) => statement.resources.includes('*')))
    throw new Error(`${id}: a statement with the resource * needs a wildcardReason`);
  const fn = new ProjectFunction(scope, id, { ...functionProps, role });
  role.addToPolicy(
    new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [fn.logGroup.logGroupArn] }),
  );
  for (const statement of statements) role.addToPolicy(statement);
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason: `X-Ray tracing (xray:PutTraceSegments, xray:PutTelemetryRecords) supports no resource-level permissions.${wildcardReason ? ` ${wildcardReason}` : ''}`,
  });
  return fn;
}
