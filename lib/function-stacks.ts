import { Duration, NestedStack, type Stack, Validations } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, type IAlarm, MathExpression, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import {
  type ILambdaApplication,
  type ILambdaDeploymentConfig,
  LambdaApplication,
  LambdaDeploymentConfig,
  LambdaDeploymentGroup,
} from 'aws-cdk-lib/aws-codedeploy';
import { type IRole, ManagedPolicy, Policy, PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Alias } from 'aws-cdk-lib/aws-lambda';
import type { IDependable } from 'constructs';
import type { ProjectFunction } from './project-function.ts';

/**
 * The nested stack each function goes in, by the first segments of its route's path (the longest prefix
 * that matches wins) or, for the queue consumers, the timers and the unmatched route, by handler. A route
 * whose path matches nothing, or a handler not named here, fails the synth: a new area of the API is placed
 * deliberately, and the stack-size test (test/infra/stack-size.test.ts) keeps each template under its bound.
 */
export const functionAreas = {
  // Integrators' administration of tenants and templates (and the worker that rolls templates out), and what a
  // tenant token reads of itself.
  Directory: { paths: ['/tenants', '/whoami', '/tenant', '/tenant/templates'], handlers: ['rollout-worker'] },
  // Datamarts, users, groups and their permissions.
  Permissions: { paths: ['/tenant/datamart', '/tenant/users', '/tenant/groups'], handlers: [] },
  // Schedules, runs, agents, and the workers that fire and reload them.
  Schedules: {
    paths: ['/tenant/schedules', '/tenant/runs', '/tenant/agents', '/agent'],
    handlers: ['reload-worker', 'schedule-fire-worker', 'schedule-dispatcher', 'follow-up-sweeper'],
  },
  // Alerts, their webhook deliveries and the tenant's webhook settings.
  Alerts: { paths: ['/tenant/alerts', '/tenant/deliveries', '/tenant/settings'], handlers: ['webhook-deliverer'] },
  // Sign-in and what anyone may call: SSO, the JWKS, health, the API's documents, unmatched paths.
  Access: {
    paths: ['/auth', '/.well-known', '/tenant/login', '/health', '/docs', '/openapi.json'],
    handlers: ['unmatched-route'],
  },
} as const satisfies Record<string, { paths: readonly string[]; handlers: readonly string[] }>;

export type FunctionArea = keyof typeof functionAreas;

const areaEntries = Object.entries(functionAreas) as [FunctionArea, (typeof functionAreas)[FunctionArea]][];

/** The area of a route by its path, or of a worker by its handler (see functionAreas). */
export function functionAreaOf(of: { path: string } | { handler: string }): FunctionArea {
  if ('path' in of) {
    const matches = areaEntries.flatMap(([area, { paths }]) =>
      paths.filter((prefix) => of.path === prefix || of.path.startsWith(`${prefix}/`)).map((prefix) => ({ area, prefix })),
    );
    const longest = matches.sort((a, b) => b.prefix.length - a.prefix.length)[0];
    if (!longest) throw new Error(`No area of lib/function-stacks.ts holds the route path ${of.path}: add it to functionAreas`);
    return longest.area;
  }
  const found = areaEntries.find(([, { handlers }]) => (handlers as readonly string[]).includes(of.handler));
  if (!found) throw new Error(`No area of lib/function-stacks.ts holds the handler ${of.handler}: add it to functionAreas`);
  return found[0];
}

/** How a release shifts a function's traffic to its new version: a canary in production, all at once in a throwaway stage. */
export const releaseConfigOf = (ephemeral: boolean): ILambdaDeploymentConfig =>
  ephemeral ? LambdaDeploymentConfig.ALL_AT_ONCE : LambdaDeploymentConfig.CANARY_10PERCENT_5MINUTES;

/** The alias every caller of a function invokes (API integrations, event source mappings, rule targets). */
export const LIVE_ALIAS = 'live';

/**
 * A release rolls back when, in any minute, the live alias fails at least this many invocations and more than
 * RELEASE_ERROR_PERCENT of them: a few errors of a busy function are noise, a few of a quiet one are not enough.
 */
export const RELEASE_MIN_ERRORS = 3;
export const RELEASE_ERROR_PERCENT = 1;
/** ...or when its p99 duration passes this share of its time-out for 2 minutes of 3: it is about to time out. */
export const RELEASE_LATENCY_SHARE = 0.5;
/** https://docs.aws.amazon.com/codedeploy/latest/userguide/limits.html (alarms per deployment group). */
const MAX_GROUP_ALARMS = 10;

export interface FunctionStacksProps {
  ephemeral: boolean;
}

/**
 * The service's functions in nested stacks by area, each function published and invoked through its `live`
 * alias, which CodeDeploy shifts to a new version (a canary in production) and rolls back on the function's
 * own error and latency alarms and on the service's paging alarms. A failed shift fails the alias's update,
 * and CloudFormation rolls back the whole stack update with it.
 *
 * What holds data (table, key, queues, bucket, secrets), the roles, the API with its routes and integrations,
 * and the monitoring stay in the service's stack under their logical ids: the route keys are unique in an API,
 * so a route moved to another template would be created before the old one is deleted, and refused.
 */
export class FunctionStacks {
  private readonly stacks = new Map<FunctionArea, NestedStack>();
  private readonly application: LambdaApplication;
  private readonly releaseRole: Role;
  private readonly releaseConfig: ILambdaDeploymentConfig;
  /** Per nested stack and execution role: the statement that lets the role write its functions' log groups there. */
  private readonly logWriting = new Map<string, PolicyStatement>();
  private readonly deploymentGroups: LambdaDeploymentGroup[] = [];
  /** What every nested stack waits for (waitFor). */
  private readonly awaited: IDependable[] = [];

  constructor(
    private readonly stack: Stack,
    props: FunctionStacksProps,
  ) {
    this.application = new LambdaApplication(stack, 'Releases');
    // One CodeDeploy service role for every deployment group, rather than one each (a resource of the stack's 500 each).
    this.releaseRole = new Role(stack, 'ReleaseRole', {
      assumedBy: new ServicePrincipal('codedeploy.amazonaws.com'),
      description: 'CodeDeploy shifts the functions live aliases with this role',
      managedPolicies: [ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSCodeDeployRoleForLambdaLimited')],
    });
    Validations.of(this.releaseRole).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSCodeDeployRoleForLambdaLimited]',
      reason:
        "AWSCodeDeployRoleForLambdaLimited is AWS's own policy for CodeDeploy's Lambda deployments: it may update aliases " +
        'and read the alarms, and invoke only hook functions whose name begins with CodeDeployHook_ (the service has none).',
    });
    this.releaseConfig = releaseConfigOf(props.ephemeral);
  }

  /** The nested stack of an area, made on first use. */
  scopeFor(area: FunctionArea): NestedStack {
    let nested = this.stacks.get(area);
    if (!nested) {
      nested = new NestedStack(this.stack, area, { description: `The ${area} functions of ${this.stack.stackName}` });
      for (const dependency of this.awaited) nested.node.addDependency(dependency);
      this.stacks.set(area, nested);
    }
    return nested;
  }

  /**
   * Makes every nested stack, made already or later, wait for `dependency` (the stored data migration): no function
   * version of a release is published, and no alias shifts, before it is done.
   */
  waitFor(dependency: IDependable): void {
    this.awaited.push(dependency);
    for (const nested of this.stacks.values()) nested.node.addDependency(dependency);
  }

  /** The nested stacks, by area. */
  get nestedStacks(): ReadonlyMap<FunctionArea, NestedStack> {
    return this.stacks;
  }

  /**
   * Publishes `fn` (made in `scopeFor(area)`) and returns its live alias, which CodeDeploy shifts on every new
   * version; lets the function's role write its log group from the nested stack.
   */
  live(fn: ProjectFunction, id: string): Alias {
    const scope = fn.stack as NestedStack;
    this.allowLogWriting(scope, fn);
    const alias = new Alias(scope, `${id}Live`, { aliasName: LIVE_ALIAS, version: fn.currentVersion });
    const minute = { period: Duration.minutes(1) };
    const errors = new Alarm(scope, `${id}ReleaseErrors`, {
      alarmDescription: `${id}: its live alias fails ${RELEASE_MIN_ERRORS} or more invocations in a minute, over ${RELEASE_ERROR_PERCENT}% of them (rolls a release back)`,
      metric: new MathExpression({
        expression: `IF(errors >= ${RELEASE_MIN_ERRORS} AND 100 * errors > ${RELEASE_ERROR_PERCENT} * invocations, 1, 0)`,
        usingMetrics: { errors: alias.metricErrors(minute), invocations: alias.metricInvocations(minute) },
        period: minute.period,
        label: 'Release errors',
      }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const latencyMs = Math.round((fn.timeout?.toMilliseconds() ?? 3000) * RELEASE_LATENCY_SHARE);
    const latency = new Alarm(scope, `${id}ReleaseLatency`, {
      alarmDescription: `${id}: its live alias's p99 duration is over ${latencyMs} ms for 2 minutes of 3 (rolls a release back)`,
      metric: alias.metricDuration({ ...minute, statistic: 'p99' }),
      threshold: latencyMs,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: TreatMissingData.NOT_BREACHING,
    });
    const group = new LambdaDeploymentGroup(scope, `${id}Release`, {
      application: this.application as ILambdaApplication,
      alias,
      deploymentConfig: this.releaseConfig,
      alarms: [errors, latency],
      // Immutable: the role is the stack's, with its one managed policy; the group would add it again.
      role: Role.fromRoleArn(scope, `${id}ReleaseRole`, this.releaseRole.roleArn, { mutable: false }) as IRole,
      autoRollback: { failedDeployment: true, deploymentInAlarm: true, stoppedDeployment: true },
    });
    this.deploymentGroups.push(group);
    return alias;
  }

  /**
   * Stops and rolls back every release while one of these alarms is on: the service's user-facing symptoms
   * (monitoring.ts). They must read none of the functions' metrics, or the nested stacks and the alarms would
   * wait on each other. CodeDeploy takes at most 10 alarms per deployment group, 2 of them the function's own.
   */
  watchServiceAlarms(alarms: readonly IAlarm[]): void {
    if (alarms.length > MAX_GROUP_ALARMS - 2)
      throw new Error(`A deployment group takes ${MAX_GROUP_ALARMS} alarms: ${alarms.length} service alarms leave no room`);
    for (const group of this.deploymentGroups) for (const alarm of alarms) group.addAlarm(alarm);
  }

  /**
   * The role is the stack's (shared by functions with the same permissions) and the log group the nested
   * stack's: the statement naming it goes in a policy of the nested stack, so the stack's resources never
   * wait on a nested stack that waits on them.
   */
  private allowLogWriting(scope: NestedStack, fn: ProjectFunction): void {
    const role = fn.role;
    if (!role) throw new Error(`${fn.node.id} has no role`);
    const key = `${scope.node.id}/${role.node.id}`;
    let statement = this.logWriting.get(key);
    if (!statement) {
      statement = new PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'] });
      new Policy(scope, `${scope.node.id}${role.node.id}LogWriting`, { roles: [role], statements: [statement] });
      this.logWriting.set(key, statement);
    }
    statement.addResources(fn.logGroup.logGroupArn);
  }
}
