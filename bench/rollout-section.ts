/**
 * The Fleet rollouts section of bench/results.md: a version rolled out to 1,000 tenants on the twin
 * (bench/rollouts.ts, in a process of its own), a quiet client's calls meanwhile against the budget,
 * and the model of 10,000 tenants on AWS at the default concurrency. `npm run bench -- rollouts`
 * measures and rewrites only this section; the full run rewrites it after the rest.
 */
import { tenantsInParallel } from '#functions/core/rollouts/rollout-runner.ts';
import { ROLLOUT_CONCURRENCY } from '#lib/deployment-settings.ts';
import { awsAssumptions } from './burst-model.ts';
import { measureInOwnProcess, replaceSection, withinBudget } from './noisy-section.ts';
import type { RolloutBenchResult } from './rollouts.ts';
import { fixed, markdownTable } from './table.ts';

export const rolloutHeading = '## Fleet rollouts';

/**
 * A tenant's turn on AWS, one DynamoDB round trip after another: the tenant; its journal, resources
 * and agents together; the template and the version together; the lock; the resources' batch writes;
 * the closing transaction (about twice a single write).
 */
const sequentialRoundTrips = 7;
/** The plan's page of 100: the fleet's Query page, its batch writes (4, in parallel), the cursor's update. */
const planPageMs = awsAssumptions.dynamoPageMs + 2 * awsAssumptions.dynamoRequestMs;
/** A worker's invocation works until 20 s before its 60-second time-out, then hands over (the message comes back at once). */
const workPerInvocationMs = 40_000;

/** The time of a rollout of `tenants` at the defaults (waves of 10%, no pause), from the assumptions. */
export function rolloutModel(tenants: number) {
  const turnMs = sequentialRoundTrips * awsAssumptions.dynamoRequestMs;
  // Before each batch of 10, the rollout is read again.
  const batchMs = turnMs + awsAssumptions.dynamoRequestMs;
  const applyMs = Math.ceil(tenants / tenantsInParallel) * batchMs;
  const planMs = Math.ceil(tenants / 100) * planPageMs;
  // Each wave: its start, its tenants read (a Query page per 1 MB), its end (a transaction).
  const waveMs = 10 * (awsAssumptions.dynamoRequestMs + awsAssumptions.dynamoPageMs + 2 * awsAssumptions.dynamoRequestMs);
  const handOffs = Math.ceil((applyMs + planMs) / workPerInvocationMs);
  const totalMs = planMs + applyMs + waveMs + handOffs * (awsAssumptions.invocationOverheadMs + 1000);
  return { turnMs, planMs, applyMs, waveMs, handOffs, totalMs, tenantsPerSecond: (tenantsInParallel * 1000) / batchMs };
}

export function rolloutSection(result: RolloutBenchResult): string {
  const budget = 2 * result.quietAlone.p99Ms + 1000;
  const passes = result.applied === result.tenants && withinBudget(result.quietDuring.p99Ms, result.quietAlone.p99Ms);
  const model = rolloutModel(10_000);
  const seconds = (ms: number) => fixed(ms / 1000, 1);
  return [
    `${rolloutHeading}\n\nA template version rolled out to ${result.tenants.toLocaleString('en')} tenants (\`POST /tenants/templates/{id}/rollouts\`, waves of ${result.waveSize}, no pause) on a twin running the rollout worker alone; meanwhile a quiet client lists its tenants (\`GET /tenants?limit=20\`) every 50 ms, as it did alone before. Requests per tenant are the rollout's (its plan, waves and applies: DynamoDB and SQS), the quiet client's and the polls' taken out. \`npm run bench -- rollouts\` measures this section alone and rewrites only it.`,
    markdownTable(
      ['tenants', 'applied', 'rollout s', 'DynamoDB requests per tenant', 'SQS requests per tenant'],
      [
        [
          result.tenants.toLocaleString('en'),
          result.applied.toLocaleString('en'),
          fixed(result.seconds, 1),
          fixed(result.dynamoPerTenant, 1),
          fixed(result.sqsPerTenant, 2),
        ],
      ],
    ),
    markdownTable(
      ['quiet client', 'calls', 'p50 ms', 'p99 ms', 'budget (p99 ≤ 2× alone + 1 s)'],
      [
        ['alone', result.quietAlone.calls, fixed(result.quietAlone.p50Ms, 1), fixed(result.quietAlone.p99Ms, 1), ''],
        [
          'during the rollout',
          result.quietDuring.calls,
          fixed(result.quietDuring.p50Ms, 1),
          fixed(result.quietDuring.p99Ms, 1),
          `${passes ? 'pass' : '**FAIL**'} (≤ ${fixed(budget, 0)} ms)`,
        ],
      ],
    ),
    `### Model on AWS\n\n10,000 tenants at the defaults (waves of 1,000, no pause; one worker per rollout, ${tenantsInParallel} tenants at a time; \`rolloutConcurrency\` ${ROLLOUT_CONCURRENCY.fallback} rollouts at once), with the burst model's assumptions (a DynamoDB request ${awsAssumptions.dynamoRequestMs} ms, a Query page ${awsAssumptions.dynamoPageMs} ms, an invocation's overhead ${awsAssumptions.invocationOverheadMs} ms) and a tenant's turn of ${sequentialRoundTrips} round trips one after another. Arithmetic in bench/rollout-section.ts; docs/rollouts.md explains it.`,
    markdownTable(
      ['step', 'time s'],
      [
        ['plan (100 pages of 100)', seconds(model.planMs)],
        [`applies (${fixed(model.tenantsPerSecond, 0)} tenants a second)`, seconds(model.applyMs)],
        ['wave starts and ends (10)', seconds(model.waveMs)],
        [
          `hand-offs between invocations (${model.handOffs})`,
          seconds(model.handOffs * (awsAssumptions.invocationOverheadMs + 1000)),
        ],
        ['**total**', `**${seconds(model.totalMs)}**`],
      ],
    ),
  ].join('\n\n');
}

/** `npm run bench -- rollouts`, and a step of the full run: measures in a process of its own, then rewrites the section. */
export async function rewriteRolloutSection(reportFile: string, environment: NodeJS.ProcessEnv): Promise<void> {
  await replaceSection(
    reportFile,
    rolloutHeading,
    rolloutSection(await measureInOwnProcess<RolloutBenchResult>('rollouts.ts', environment)),
  );
}
