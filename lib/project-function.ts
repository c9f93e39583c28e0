import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type { IRole } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';

export interface ProjectFunctionProps {
  /** Path of the handler file, relative to the project root. */
  entry: string;
  description: string;
  environment: Record<string, string>;
  /** Default 15 s: under API Gateway's 30 s integration limit. */
  timeoutSeconds?: number;
  /** The execution role, shared by the functions that need exactly the same permissions. */
  role: IRole;
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
      // The idempotency claim (60 s) and every queue's visibility timeout outlive it.
      timeout: Duration.seconds(props.timeoutSeconds ?? 15),
      tracing: Tracing.ACTIVE,
      logGroup,
      role: props.role,
      environment: {
        ...props.environment,
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: 'bi-tenant-admin',
        POWERTOOLS_LOG_LEVEL: 'INFO',
      },
      bundling: {
        format: OutputFormat.ESM,
        target: 'node22',
        minify: true,
        sourceMap: true,
        mainFields: ['module', 'main'],
        // The SDK is bundled at the version the tests ran against, not taken from the runtime.
        externalModules: [],
        // Some CommonJS dependencies call require() on Node built-ins; give ESM output one.
        banner: "import{createRequire}from'node:module';const require=createRequire(import.meta.url);",
      },
    });
  }
}
