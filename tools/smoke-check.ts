/**
 * The post-deploy check of a deployed stage (`npm run smoke -- --stage <name>`, bin/smoke.ts). It reads
 * the stage's settings from the CDK context (cdk.json) as the synth does, the stacks' outputs, and checks
 * what a deploy cannot finish by itself, one line per problem, each saying what to do:
 *
 * - every subscription of every alarm topic (each stack output whose name ends in `TopicArn`) is
 *   confirmed, and with `alarmEmail` set each topic has one: SNS e-mails wait for a click;
 * - the JWKS has a key (the deploy's custom resource makes the first: lib/signing-keys.ts);
 * - `GET /health` answers 200 at `ApiUrl` (with the edge, through CloudFront: DNS, certificate, WAF);
 * - the account's quotas in the stage's region are at least what the stage's settings need.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetAccountSettingsCommand, type LambdaClient } from '@aws-sdk/client-lambda';
import {
  GetAWSDefaultServiceQuotaCommand,
  GetServiceQuotaCommand,
  NoSuchResourceException,
  type ServiceQuotasClient,
} from '@aws-sdk/client-service-quotas';
import { ListSubscriptionsByTopicCommand, type SNSClient, type Subscription } from '@aws-sdk/client-sns';
import { App } from 'aws-cdk-lib';
import { awsAssumptions } from '#bench/burst-model.ts';
import { routes } from '#functions/routes.ts';
import { type DeploymentSettings, deploymentSettings } from '#lib/deployment-settings.ts';
import { EDGE_REGION, type Stage, stageOf } from '#lib/stage.ts';
import { routeBuckets } from '#lib/throttling.ts';

/** The AWS clients of one region. */
export interface AwsClients {
  cloudFormation: CloudFormationClient;
  sns: SNSClient;
  lambda: LambdaClient;
  serviceQuotas: ServiceQuotasClient;
}

export interface SmokeCheckOptions {
  stage: string;
  /** The CDK context: cdk.json's `context`. */
  context: Record<string, unknown>;
  /** The clients of a region; undefined is the SDK's default region (AWS_REGION, the profile's). */
  clients: (region: string | undefined) => AwsClients;
  print: (line: string) => void;
}

/** Prints one line per problem of the deployed stage, or one OK line; 1 when there is a problem, else 0. */
export async function runSmokeCheck(options: SmokeCheckOptions): Promise<number> {
  const problems = await smokeCheckProblems(options);
  for (const problem of problems) options.print(problem);
  if (problems.length > 0) return 1;
  options.print(`OK: stage ${options.stage}: alarm subscriptions confirmed, JWKS has a key, /health answers 200, quotas granted`);
  return 0;
}

/**
 * The stage and its settings as the synth reads them (bin/app.ts): the same context, the same checks. An App
 * makes its cloud assembly folder as it is built; without `outdir` it "considers the environment variable
 * CDK_OUTDIR" (the CDK CLI's, the output of a synth) and else a temporary folder (AppProps.outdir,
 * https://docs.aws.amazon.com/cdk/api/v2/docs/aws-cdk-lib.AppProps.html). It gets a folder of its own instead,
 * which nothing is synthesized into and which goes before the check goes on.
 */
function stageSettings(options: SmokeCheckOptions): { stage: Stage; settings: DeploymentSettings } {
  const outdir = mkdtempSync(join(tmpdir(), 'cdk.out-smoke-'));
  try {
    const app = new App({ outdir, context: { ...options.context, stage: options.stage } });
    const stage = stageOf(app);
    return { stage, settings: deploymentSettings(app, { edge: stage.edge }) };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

async function smokeCheckProblems(options: SmokeCheckOptions): Promise<string[]> {
  const { stage, settings } = stageSettings(options);
  // An ephemeral stage deploys where the credentials' profile points, as cdk deploy does.
  const region = stage.env.region ?? (await defaultRegion(options.clients(undefined)));
  if (!region)
    return [
      `stage: ${stage.name} names no region and the environment gives none: set AWS_REGION to the region it was deployed to.`,
    ];

  // The stacks' names as lib/service-app.ts gives them.
  const serviceStack = `BiTenantAdmin-${stage.name}`;
  const stacks = [{ name: serviceStack, region }, ...(stage.edge ? [{ name: `${serviceStack}-edge`, region: EDGE_REGION }] : [])];
  const outputs = await Promise.all(stacks.map((stack) => stackOutputs(options.clients(stack.region), stack, stage)));
  const problems = outputs.flatMap((output) => ('problem' in output ? [output.problem] : []));
  const found = outputs.flatMap((output) => ('values' in output ? [output.values] : []));

  const topicArns = found.flatMap((values) =>
    Object.entries(values).flatMap(([name, value]) => (name.endsWith('TopicArn') ? [value] : [])),
  );
  const apiUrl = found.find((values) => values.ApiUrl)?.ApiUrl;
  const checks = await Promise.all([
    found.length > 0 ? subscriptionProblems(options.clients, topicArns, settings.alarmEmail) : [],
    apiUrl ? jwksProblems(apiUrl, stage) : [],
    apiUrl ? healthProblems(apiUrl, stage) : [],
    quotaProblems(options.clients(region), settings, region),
  ]);
  return [...problems, ...checks.flat()];
}

/** The SDK's default region (AWS_REGION, else the profile's), if it has one. */
async function defaultRegion(clients: AwsClients): Promise<string | undefined> {
  try {
    return await clients.cloudFormation.config.region();
  } catch {
    return undefined;
  }
}

type Outputs = { values: Record<string, string> } | { problem: string };

async function stackOutputs(clients: AwsClients, stack: { name: string; region: string }, stage: Stage): Promise<Outputs> {
  const { name: stackName, region } = stack;
  try {
    const { Stacks } = await clients.cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }));
    const outputs = Stacks?.[0]?.Outputs ?? [];
    return {
      values: Object.fromEntries(
        outputs.flatMap(({ OutputKey, OutputValue }) => (OutputKey ? [[OutputKey, OutputValue ?? '']] : [])),
      ),
    };
  } catch (error) {
    // DescribeStacks answers a ValidationError "Stack with id … does not exist" for a stack it does not know.
    const missing = error instanceof Error && error.name === 'ValidationError' && /does not exist/.test(error.message);
    return {
      problem: missing
        ? `stack: ${stackName} is not deployed in ${region}: deploy the stage (npx cdk deploy --all -c stage=${stage.name}); ` +
          'the checks that need its outputs were skipped.'
        : `stack: ${stackName} could not be read in ${region} (${errorText(error)}): check the credentials (its account's, ` +
          'with cloudformation:DescribeStacks); the checks that need its outputs were skipped.',
    };
  }
}

/** The region of an ARN (`arn:aws:sns:<region>:<account>:<name>`). */
const regionOf = (arn: string): string | undefined => arn.split(':')[3] || undefined;

/**
 * An e-mail subscription is pending until its address clicks the link SNS sent; ListSubscriptionsByTopic
 * then lists it with the ARN `PendingConfirmation`, and SNS deletes it after 48 hours
 * (https://docs.aws.amazon.com/sns/latest/api/API_ListSubscriptionsByTopic.html,
 * https://docs.aws.amazon.com/sns/latest/dg/sns-delete-subscription-topic.html), leaving the topic with none.
 */
async function subscriptionProblems(
  clients: SmokeCheckOptions['clients'],
  topicArns: string[],
  alarmEmail: string | undefined,
): Promise<string[]> {
  if (topicArns.length === 0) return ['alarms: the stacks have no output ending in TopicArn: deploy the stage again.'];
  const perTopic = await Promise.all(
    topicArns.map(async (topicArn): Promise<string[]> => {
      const region = regionOf(topicArn);
      let subscriptions: Subscription[];
      try {
        subscriptions = await topicSubscriptions(clients(region).sns, topicArn);
      } catch (error) {
        return [`alarms: the subscriptions of ${topicArn} could not be read (${errorText(error)}).`];
      }
      const subscribe = (endpoint: string) =>
        `aws sns subscribe --topic-arn ${topicArn} --protocol email --notification-endpoint ${endpoint} --region ${region}`;
      const pending = subscriptions
        .filter((subscription) => subscription.SubscriptionArn === 'PendingConfirmation')
        .map(
          (subscription) =>
            `alarms: the subscription of ${subscription.Endpoint} (${subscription.Protocol}) to ${topicArn} is not confirmed, so its ` +
            'alarms reach nobody: open the e-mail "AWS Notification - Subscription Confirmation" sent to it and confirm; SNS ' +
            `deletes it after 48 hours unconfirmed (then: ${subscribe(subscription.Endpoint ?? '<address>')}).`,
        );
      const none =
        alarmEmail && subscriptions.length === 0
          ? [
              `alarms: ${topicArn} has no subscription, so its alarms reach nobody (an unconfirmed one is deleted after 48 hours): ` +
                `${subscribe(alarmEmail)}, then confirm the e-mail.`,
            ]
          : [];
      return [...pending, ...none];
    }),
  );
  return perTopic.flat();
}

async function topicSubscriptions(sns: SNSClient, topicArn: string): Promise<Subscription[]> {
  const subscriptions: Subscription[] = [];
  let nextToken: string | undefined;
  do {
    const page = await sns.send(new ListSubscriptionsByTopicCommand({ TopicArn: topicArn, NextToken: nextToken }));
    subscriptions.push(...(page.Subscriptions ?? []));
    nextToken = page.NextToken;
  } while (nextToken);
  return subscriptions;
}

/** A path of the route table, by its handler. */
function pathOf(handler: string): string {
  const route = routes.find((candidate) => candidate.handler === handler);
  if (!route) throw new Error(`No route of handler ${handler} in the route table`);
  return route.path;
}

/** What to look at when the API cannot be reached at all. */
const unreachableHint = (stage: Stage) =>
  stage.edge
    ? `check the DNS record api.${stage.tenantBaseDomain} (to the edge stack's ApiDomainTarget), the edge's EdgeProbeAlarm and its probe's log`
    : "check the API's access log (ApiAccessLogGroupName) and the stack's events";

type Answer = { status: number; body: unknown } | { failure: string };

async function get(url: string): Promise<Answer> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    const text = await response.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.status, body };
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    return { failure: cause?.code ?? cause?.message ?? errorText(error) };
  }
}

async function jwksProblems(apiUrl: string, stage: Stage): Promise<string[]> {
  const url = `${apiUrl}${pathOf('jwks')}`;
  const answer = await get(url);
  if ('failure' in answer) return [`jwks: GET ${url} failed (${answer.failure}): ${unreachableHint(stage)}.`];
  if (answer.status !== 200) return [`jwks: GET ${url} answered ${answer.status}, not 200: see the jwks function's log.`];
  const keys = (answer.body as { keys?: unknown } | undefined)?.keys;
  if (Array.isArray(keys) && keys.length > 0) return [];
  return [
    `jwks: ${url} has no key, so POST /tenant/login answers 503 no_signing_key: the deploy's custom resource ` +
      `(FirstSigningKeyInKeyring) should have made one; see its function's log (BiTenantAdmin-${stage.name}-FirstSigningKeyLogs…), ` +
      'or make one now: SIGNING_KEYS_SECRET_ARN=<SigningKeysSecretArn> npm run admin -- keys rotate.',
  ];
}

async function healthProblems(apiUrl: string, stage: Stage): Promise<string[]> {
  const url = `${apiUrl}${pathOf('health')}`;
  const answer = await get(url);
  if ('failure' in answer) return [`health: GET ${url} failed (${answer.failure}): ${unreachableHint(stage)}.`];
  if (answer.status === 200) return [];
  return [`health: GET ${url} answered ${answer.status}, not 200: ${unreachableHint(stage)}, and the health function's log.`];
}

/** A quota of Service Quotas the stage needs at least `need` of, and why. */
interface QuotaNeed {
  serviceCode: string;
  quotaCode: string;
  name: string;
  need: number;
  why: string;
}

/**
 * The quotas of docs/operations.md ("Quotas a deployment needs") that Service Quotas reads and that a
 * deployed stage can still lack: those of throughput. Those of resources (routes and authorizers per
 * API, CloudFront distributions, WAF web ACLs and rules, …) the deploy itself was held to: it would have
 * failed. Lambda's concurrency is read from Lambda (quotaProblems). The codes are those of the quotas'
 * Service Quotas links in https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html (throttle
 * rate) and https://docs.aws.amazon.com/general/latest/gr/ddb.html (table-level write throughput).
 */
function quotaNeeds(settings: DeploymentSettings): QuotaNeed[] {
  const [largest] = Object.values(routeBuckets(settings)).sort((a, b) => b.rateLimit - a.rateLimit);
  // The writes of a burst at the most the due index's shards take (bench/burst-model.ts), the table's and the
  // index's together, as docs/schedules.md (At scale) counts them against this quota.
  const a = awsAssumptions;
  const burstWrites =
    ((settings.dueShards * a.partitionWriteUnitsPerSecond) / a.indexWriteUnitsPerFire) *
    (a.tableWriteUnitsPerFire + a.indexWriteUnitsPerFire);
  return [
    {
      serviceCode: 'apigateway',
      quotaCode: 'L-8A5B8E43',
      name: 'API Gateway throttle rate (requests a second, account and region)',
      need: largest?.rateLimit ?? 0,
      why: `no route's bucket passes it, and the largest is ${largest?.settings[0]}'s (lib/throttling.ts)`,
    },
    {
      serviceCode: 'dynamodb',
      quotaCode: 'L-AB614373',
      name: 'DynamoDB table-level write throughput (on demand)',
      need: burstWrites,
      why: `a burst of schedules at dueShards ${settings.dueShards} writes that many units a second (docs/schedules.md, At scale)`,
    },
  ];
}

async function quotaProblems(clients: AwsClients, settings: DeploymentSettings, where: string): Promise<string[]> {
  const lambda = async (): Promise<string[]> => {
    // The account's concurrency as Lambda applies it (https://docs.aws.amazon.com/lambda/latest/api/API_GetAccountSettings.html).
    try {
      const { AccountLimit } = await clients.lambda.send(new GetAccountSettingsCommand({}));
      const granted = AccountLimit?.ConcurrentExecutions ?? 0;
      if (granted >= settings.accountConcurrencyLimit) return [];
      return [
        `quota: Lambda concurrent executions in ${where} is ${granted}, below the stage's accountConcurrencyLimit ` +
          `${settings.accountConcurrencyLimit}: ask for ${settings.accountConcurrencyLimit} in Service Quotas (AWS Lambda, ` +
          `Concurrent executions, L-B99A9384), or set accountConcurrencyLimit to ${granted} and deploy (the synth then checks the reservations against it).`,
      ];
    } catch (error) {
      return [`quota: Lambda concurrent executions in ${where} could not be read (${errorText(error)}).`];
    }
  };
  const serviceQuota = async (quota: QuotaNeed): Promise<string[]> => {
    try {
      const granted = await appliedQuota(clients.serviceQuotas, quota);
      if (granted >= quota.need) return [];
      return [
        `quota: ${quota.name} in ${where} is ${granted}, below the ${quota.need} the stage needs (${quota.why}): ` +
          `ask for ${quota.need} in Service Quotas (${quota.serviceCode}, ${quota.quotaCode}).`,
      ];
    } catch (error) {
      return [
        `quota: ${quota.name} (${quota.serviceCode} ${quota.quotaCode}) in ${where} could not be read (${errorText(error)}).`,
      ];
    }
  };
  const all = await Promise.all([lambda(), ...quotaNeeds(settings).map(serviceQuota)]);
  return all.flat();
}

/**
 * The quota's value in this account: the applied one, or AWS's default where Service Quotas has no
 * applied value for it (GetServiceQuota then answers NoSuchResourceException:
 * https://docs.aws.amazon.com/servicequotas/2019-06-24/apireference/API_GetServiceQuota.html).
 */
async function appliedQuota(serviceQuotas: ServiceQuotasClient, quota: QuotaNeed): Promise<number> {
  const input = { ServiceCode: quota.serviceCode, QuotaCode: quota.quotaCode };
  try {
    return (await serviceQuotas.send(new GetServiceQuotaCommand(input))).Quota?.Value ?? 0;
  } catch (error) {
    if (!(error instanceof NoSuchResourceException)) throw error;
    return (await serviceQuotas.send(new GetAWSDefaultServiceQuotaCommand(input))).Quota?.Value ?? 0;
  }
}

const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));
