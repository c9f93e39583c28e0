/**
 * The post-deploy check of a deployed stage: `npm run smoke -- --stage <name>` (what it checks:
 * tools/smoke-check.ts). AWS credentials and region from the environment, as for `cdk deploy`.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { LambdaClient } from '@aws-sdk/client-lambda';
import { ServiceQuotasClient } from '@aws-sdk/client-service-quotas';
import { SNSClient } from '@aws-sdk/client-sns';
import { type AwsClients, runSmokeCheck } from '#tools/smoke-check.ts';

const usage = `Usage: npm run smoke -- --stage <name>

  Checks the stage <name> of cdk.json as deployed (stack BiTenantAdmin-<name> and, with the edge,
  BiTenantAdmin-<name>-edge in us-east-1): every alarm subscription is confirmed, the JWKS has a key,
  GET /health answers 200 at ApiUrl, and the account's quotas are what the stage needs.
  Prints one line per problem, each saying what to do, or an OK line. Exit code 1 on any problem,
  2 when the check cannot run (no --stage, or settings the synth would refuse).`;

class UsageError extends Error {}

const { values } = parseArgs({ options: { stage: { type: 'string' }, help: { type: 'boolean' } } });

/** One set of clients per region: the stage's, and us-east-1 for the edge's stack and topic. */
const clientsByRegion = new Map<string, AwsClients>();
function awsClients(region: string | undefined): AwsClients {
  const key = region ?? '';
  let clients = clientsByRegion.get(key);
  if (!clients) {
    const config = region ? { region } : {};
    clients = {
      cloudFormation: new CloudFormationClient(config),
      sns: new SNSClient(config),
      lambda: new LambdaClient(config),
      serviceQuotas: new ServiceQuotasClient(config),
    };
    clientsByRegion.set(key, clients);
  }
  return clients;
}

async function main(): Promise<number> {
  if (values.help) {
    console.log(usage);
    return 0;
  }
  if (!values.stage) throw new UsageError('--stage <name> is required');
  const { context } = JSON.parse(readFileSync(new URL('../cdk.json', import.meta.url), 'utf8')) as {
    context: Record<string, unknown>;
  };
  return runSmokeCheck({ stage: values.stage, context, clients: awsClients, print: (line) => console.log(line) });
}

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
try {
  process.exitCode = await main();
} catch (error) {
  // A stage the synth would refuse (unknown, or a bad setting) says why, as the synth would.
  console.error(
    error instanceof UsageError ? `${error.message}\n\n${usage}` : error instanceof Error ? error.message : String(error),
  );
  process.exitCode = 2;
}
