import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { type IRole, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Construct } from 'constructs';
import { serviceName } from '#functions/core/observability/names.ts';
import { routeTimeoutSeconds } from '#functions/routes.ts';

const resolvePackageFile = createRequire(import.meta.url).resolve;

/** Modules the bundles take in place of what Node.js would load: smaller, for the same behaviour on Lambda. */
const lambdaAliases = {
  // Credentials from the environment only, as Lambda provides them: see that module.
  '@aws-sdk/credential-provider-node': fileURLToPath(new URL('../functions/core/lambda-credentials.ts', import.meta.url)),
  // The package's ES module build of the same code: its "node" export is CommonJS, which esbuild cannot tree-shake.
  yaml: join(dirname(resolvePackageFile('yaml/package.json')), 'browser', 'index.js'),
};

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
 * Every function of the service: Node.js 22 on arm64, ESM bundled and minified by esbuild with
 * source maps, X-Ray tracing, and a log group with a retention. Routes state only their entry.
 */
export class ProjectFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ProjectFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}Logs`, {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    super(scope, id, {
      entry: props.entry,
      handler: 'handler',
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
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        minify: true,
        sourceMap: true,
        mainFields: ['module', 'main'],
        // The SDK is bundled at the version the tests ran against, not taken from the runtime. All but its event-stream
        // code (about 20 KB), which @smithy/core's HttpProtocol imports dynamically for event-stream operations only:
        // no function calls one, and an import() of a module left out fails only if it runs.
        externalModules: ['@smithy/core/event-streams'],
        esbuildArgs: Object.fromEntries(Object.entries(lambdaAliases).map(([from, to]) => [`--alias:${from}`, to])),
        // Some CommonJS dependencies call require() on Node built-ins; give ESM output one.
        banner: "import{createRequire}from'node:module';const require=createRequire(import.meta.url);",
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (_inputDir, outputDir) =>
            (props.packageFiles ?? []).map((file) => `cp "${resolvePackageFile(file)}" "${outputDir}/${basename(file)}"`),
        },
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
