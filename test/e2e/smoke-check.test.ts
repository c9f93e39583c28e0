/**
 * `npm run smoke -- --stage <name>` (tools/smoke-check.ts) against the running twin: its HTTP checks
 * call the twin (or a local server playing a broken API), and what only exists on AWS (CloudFormation's
 * outputs, SNS subscriptions, Lambda's and Service Quotas' values) is answered at the SDK boundary, by
 * real clients whose middleware answers each command before anything is signed or sent.
 */
import { once } from 'node:events';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudFormationClient, CloudFormationServiceException } from '@aws-sdk/client-cloudformation';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { NoSuchResourceException, ServiceQuotasClient } from '@aws-sdk/client-service-quotas';
import { SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { runToEnd } from '#test/support/processes.ts';
import { withEnvironment } from '#test/support/scoped-environment.ts';
import { productionStage } from '#test/support/stages.ts';
import { type AwsClients, runSmokeCheck } from '#tools/smoke-check.ts';

const ACCOUNT = productionStage.account;
const REGION = productionStage.region;
const topic = (region: string, name: string) => `arn:aws:sns:${region}:${ACCOUNT}:${name}`;
/** A page topic and a ticket topic (the service's alarms split by urgency), and the edge's. */
const pageTopic = topic(REGION, 'BiTenantAdmin-prod-Page');
const ticketTopic = topic(REGION, 'BiTenantAdmin-prod-Ticket');
const edgeTopic = topic('us-east-1', 'BiTenantAdmin-prod-edge-Alarms');
const confirmed = (topicArn: string, n = 1) => ({
  SubscriptionArn: `${topicArn}:0000000${n}-aaaa-bbbb-cccc-dddddddddddd`,
  Endpoint: productionStage.alarmEmail,
  Protocol: 'email',
  TopicArn: topicArn,
});
const pending = (topicArn: string) => ({ ...confirmed(topicArn), SubscriptionArn: 'PendingConfirmation' });

/** What AWS holds for the stage, answered by command; each test changes what it needs. */
interface Account {
  stacks: Record<string, { region: string; outputs: Record<string, string> }>;
  /** Pages of each topic's subscriptions. */
  subscriptions: Record<string, object[][]>;
  concurrentExecutions: number;
  /** Applied quota values by code; a code without one has AWS's default only. */
  applied: Record<string, number>;
  defaults: Record<string, number>;
}

const healthyAccount = (apiUrl: string): Account => ({
  stacks: {
    'BiTenantAdmin-prod': { region: REGION, outputs: { ApiUrl: apiUrl, PageTopicArn: pageTopic, TicketTopicArn: ticketTopic } },
    'BiTenantAdmin-prod-edge': { region: 'us-east-1', outputs: { EdgeAlarmTopicArn: edgeTopic, WebAclArn: 'arn:waf' } },
  },
  subscriptions: {
    // Two pages: every page is read.
    [pageTopic]: [[confirmed(pageTopic)], [confirmed(pageTopic, 2)]],
    [ticketTopic]: [[confirmed(ticketTopic)]],
    [edgeTopic]: [[confirmed(edgeTopic)]],
  },
  concurrentExecutions: 1000,
  applied: { 'L-8A5B8E43': 10_000 },
  defaults: { 'L-AB614373': 40_000 },
});

/** Every command the clients were sent: which, in which region, with what. */
type Sent = { command: string; region: string; input: Record<string, unknown> };

function answer(account: Account, { command, region, input }: Sent): object {
  switch (command) {
    case 'DescribeStacksCommand': {
      const stack = account.stacks[String(input.StackName)];
      if (!stack || stack.region !== region)
        throw new CloudFormationServiceException({
          name: 'ValidationError',
          $fault: 'client',
          $metadata: {},
          message: `Stack with id ${String(input.StackName)} does not exist`,
        });
      const Outputs = Object.entries(stack.outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue }));
      return { Stacks: [{ StackName: input.StackName, Outputs }] };
    }
    case 'ListSubscriptionsByTopicCommand': {
      const pages = account.subscriptions[String(input.TopicArn)] ?? [[]];
      const page = Number(input.NextToken ?? 0);
      return { Subscriptions: pages[page], NextToken: page + 1 < pages.length ? String(page + 1) : undefined };
    }
    case 'GetAccountSettingsCommand':
      return { AccountLimit: { ConcurrentExecutions: account.concurrentExecutions } };
    case 'GetServiceQuotaCommand': {
      const value = account.applied[String(input.QuotaCode)];
      if (value === undefined) throw new NoSuchResourceException({ $metadata: {}, message: 'No applied value' });
      return { Quota: { QuotaCode: input.QuotaCode, Value: value } };
    }
    case 'GetAWSDefaultServiceQuotaCommand':
      return { Quota: { QuotaCode: input.QuotaCode, Value: account.defaults[String(input.QuotaCode)] } };
    default:
      throw new Error(`Not answered here: ${command}`);
  }
}

/** The clients of each region, their commands answered from `account` and recorded in `sent`. */
function fakeAws(account: Account, sent: Sent[]) {
  return (region: string | undefined): AwsClients => {
    const where = region ?? 'unset';
    // An initialize-step middleware that never calls the next: the same for the four clients (hence the cast).
    const answering = (_next: unknown, context: { commandName?: string }) => async (args: { input: object }) => {
      const request = { command: String(context.commandName), region: where, input: args.input as Record<string, unknown> };
      sent.push(request);
      return { output: { $metadata: {}, ...answer(account, request) }, response: {} };
    };
    const config = { region: where, credentials: { accessKeyId: 'test', secretAccessKey: 'test' } };
    const clients = {
      cloudFormation: new CloudFormationClient(config),
      sns: new SNSClient(config),
      lambda: new LambdaClient(config),
      serviceQuotas: new ServiceQuotasClient(config),
    };
    for (const client of Object.values(clients))
      client.middlewareStack.add(answering as never, { step: 'initialize', name: 'answeredByTheTest' });
    return clients;
  };
}

/** Cloud assembly folders in the temporary folder: the check's own (cdk.out-smoke-…), or an App's default (cdk.out…). */
const assemblyFolders = () => new Set(readdirSync(tmpdir()).filter((name) => name.startsWith('cdk.out')));

/** The smoke check of the production stage against `account`: its exit code and printed lines. */
async function smoke(account: Account, sent: Sent[] = []) {
  const lines: string[] = [];
  const before = assemblyFolders();
  const code = await runSmokeCheck({
    stage: 'prod',
    context: { stages: { prod: productionStage } },
    clients: fakeAws(account, sent),
    print: (line) => lines.push(line),
  });
  // It reads the stage's settings through a CDK App, which makes a folder to synthesize into: none is left behind.
  expect([...assemblyFolders()].filter((name) => !before.has(name))).toEqual([]);
  return { code, lines };
}

/** An API whose signing keyring is empty and whose health check fails. */
const brokenApi = createServer((request, response) => {
  if (request.url === '/.well-known/jwks.json') {
    response.setHeader('content-type', 'application/jwk-set+json');
    response.end('{"keys":[]}');
    return;
  }
  response.statusCode = 503;
  response.end('{"status":"error"}');
});
let brokenApiUrl = '';

beforeAll(async () => {
  brokenApi.listen(0, '127.0.0.1');
  await once(brokenApi, 'listening');
  brokenApiUrl = `http://127.0.0.1:${(brokenApi.address() as AddressInfo).port}`;
});
afterAll(() => {
  brokenApi.close();
});

test('a stage that passes every check: one OK line, exit code 0', async () => {
  const sent: Sent[] = [];
  const { code, lines } = await smoke(healthyAccount(inject('twinUrl')), sent);
  expect(lines).toEqual(['OK: stage prod: alarm subscriptions confirmed, JWKS has a key, /health answers 200, quotas granted']);
  expect(code).toBe(0);
  // Every topic output was read, each in its own region, every page of it.
  const listed = sent.filter(({ command }) => command === 'ListSubscriptionsByTopicCommand');
  expect(listed.map(({ region, input }) => [region, input.TopicArn, input.NextToken])).toEqual(
    expect.arrayContaining([
      [REGION, pageTopic, undefined],
      [REGION, pageTopic, '1'],
      [REGION, ticketTopic, undefined],
      ['us-east-1', edgeTopic, undefined],
    ]),
  );
  expect(listed).toHaveLength(4);
  // The quotas of the stage's region; the one without an applied value read as AWS's default.
  expect(
    sent
      .filter(({ command }) => command.includes('Quota') || command === 'GetAccountSettingsCommand')
      .map(({ region }) => region),
  ).toEqual([REGION, REGION, REGION, REGION]);
});

test("the CDK CLI's output folder (CDK_OUTDIR, an App's default) is neither written to nor removed", async () => {
  const cliOutput = mkdtempSync(join(tmpdir(), 'cdk-cli-output-'));
  writeFileSync(join(cliOutput, 'manifest.json'), '{}');
  try {
    const { code } = await withEnvironment({ CDK_OUTDIR: cliOutput }, () => smoke(healthyAccount(inject('twinUrl'))));
    expect(code).toBe(0);
    expect(readdirSync(cliOutput)).toEqual(['manifest.json']);
  } finally {
    rmSync(cliOutput, { recursive: true, force: true });
  }
});

test('each problem is one line naming it and what to do, and the exit code is 1', async () => {
  const account = healthyAccount(brokenApiUrl);
  account.subscriptions[pageTopic] = [[pending(pageTopic)]];
  account.subscriptions[ticketTopic] = [[]];
  account.concurrentExecutions = 400;
  account.applied['L-AB614373'] = 20_000;
  const { code, lines } = await smoke(account);
  expect(code).toBe(1);
  expect(lines).toEqual([
    expect.stringMatching(
      new RegExp(
        `^alarms: the subscription of ops@example\\.com \\(email\\) to ${pageTopic} is not confirmed.*` +
          'open the e-mail "AWS Notification - Subscription Confirmation"',
      ),
    ),
    expect.stringMatching(
      new RegExp(`^alarms: ${ticketTopic} has no subscription.*aws sns subscribe --topic-arn ${ticketTopic} --protocol email`),
    ),
    expect.stringMatching(
      new RegExp(`^jwks: ${brokenApiUrl}/\\.well-known/jwks\\.json has no key, so POST /tenant/login answers 503.*keys rotate`),
    ),
    expect.stringMatching(new RegExp(`^health: GET ${brokenApiUrl}/health answered 503, not 200: check the DNS record api\\.`)),
    expect.stringMatching(
      /^quota: Lambda concurrent executions in eu-west-1 is 400, below the stage's accountConcurrencyLimit 1000: ask for 1000 in Service Quotas/,
    ),
    expect.stringMatching(
      /^quota: DynamoDB table-level write throughput \(on demand\) in eu-west-1 is 20000, below the 32000 the stage needs .*L-AB614373/,
    ),
  ]);
});

test('a stack that is not deployed is one line, and the checks of the other still run', async () => {
  const account = healthyAccount(inject('twinUrl'));
  delete account.stacks['BiTenantAdmin-prod-edge'];
  const { code, lines } = await smoke(account);
  expect(lines).toEqual([
    'stack: BiTenantAdmin-prod-edge is not deployed in us-east-1: deploy the stage (npx cdk deploy --all -c stage=prod); ' +
      'the checks that need its outputs were skipped.',
  ]);
  expect(code).toBe(1);
});

test('the command refuses to run without a stage (exit code 2, with its usage)', async () => {
  const { code, output } = await runToEnd('bin/smoke.ts', []);
  expect(code).toBe(2);
  expect(output).toContain('--stage <name> is required');
  expect(output).toContain('Usage: npm run smoke -- --stage <name>');
});
