/**
 * The Noisy neighbours section of bench/results.md: the twin's measurements (bench/noisy.ts, in a
 * process of its own) with the budget marked, and the model for AWS (bench/noisy-model.ts) with
 * its sources. `npm run bench -- noisy` measures and rewrites only this section; the full run
 * rewrites it after the rest of the report.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { maxInFlightLimits, stallsToOpen } from '#functions/core/alerts/endpoint.ts';
import { dispatchSettingLimits } from '#functions/core/schedules/dispatch-settings.ts';
import { firstListingSchedules, schedulesPerMessage } from '#functions/core/schedules/dispatcher.ts';
import { shardBlockSize } from '#functions/core/schedules/schedule-repository.ts';
import { queueConsumers } from '#functions/routes.ts';
import { FIRE_CONCURRENCY } from '#lib/deployment-settings.ts';
import { startingBatches } from '#local/queue-poller.ts';
import { burstModel } from './burst-model.ts';
import { runForStdout } from './child-process.ts';
import { noisyAssumptions, scheduleModel, webhookModel } from './noisy-model.ts';
import { type NoisyResult, type NoisyScheduleRow, type NoisyWebhookRow, quietSchedulesEach } from './noisy-neighbours.ts';
import { fixed, markdownTable } from './table.ts';

export const noisyHeading = '## Noisy neighbours';

/** With the noisy neighbour, the quiet tenant's p99 may be at most twice its p99 alone, plus a second. */
export const withinBudget = (p99Ms: number, aloneP99Ms: number) => p99Ms <= 2 * aloneP99Ms + 1000;
const pass = (ok: boolean) => (ok ? 'pass' : '**FAIL**');
const seconds = (ms: number) => fixed(ms / 1000, 2);

/** Per fire, the tick's and the workers' requests, as the burst bench measures them (docs/schedules.md, At scale). */
const perFire = { dynamo: 1.3, sqs: 1.0 };

const consumer = (queue: 'webhook' | 'fire') => queueConsumers.find((entry) => entry.queue === queue);

function webhookTable(rows: readonly NoisyWebhookRow[]): string {
  const alone = rows.find((row) => row.noisyAlerts === 0);
  return markdownTable(
    [
      'noisy alerts (receiver never answers)',
      'quiet deliveries',
      'lost',
      'quiet p50 s',
      'quiet p99 s',
      'budget (p99 ≤ 2× alone + 1 s)',
    ],
    rows.map((row) => [
      row.noisyAlerts === 0 ? 'none (alone)' : row.noisyAlerts.toLocaleString('en'),
      row.quietDeliveries,
      row.lost,
      seconds(row.p50Ms),
      seconds(row.p99Ms),
      row.noisyAlerts === 0 || !alone
        ? ''
        : `${pass(row.lost === 0 && withinBudget(row.p99Ms, alone.p99Ms))} (≤ ${seconds(2 * alone.p99Ms + 1000)} s)`,
    ]),
  );
}

function scheduleTable(rows: readonly NoisyScheduleRow[]): string {
  const alone = rows.find((row) => row.noisyDue === 0);
  return markdownTable(
    [
      'noisy schedules due',
      'quiet fired / due',
      'quiet lateness p50 s',
      'quiet lateness p99 s (lowest-highest round)',
      'noisy last fire s',
      'budget (p99 ≤ 2× alone + 1 s)',
    ],
    rows.map((row) => [
      row.noisyDue === 0 ? 'none (alone)' : row.noisyDue.toLocaleString('en'),
      `${row.quietFired} / ${row.quietDue}`,
      seconds(row.p50Ms),
      `${seconds(row.p99Ms)} (${seconds(row.p99SpreadMs[0])}-${seconds(row.p99SpreadMs[1])})`,
      row.noisyLastMs === undefined ? '' : seconds(row.noisyLastMs),
      row.noisyDue === 0 || !alone
        ? ''
        : `${pass(row.quietFired === row.quietDue && withinBudget(row.p99Ms, alone.p99Ms))} (≤ ${seconds(2 * alone.p99Ms + 1000)} s)`,
    ]),
  );
}

function modelSection(result: NoisyResult): string {
  const aws = noisyAssumptions;
  const deliverer = consumer('webhook');
  const fireWorker = consumer('fire');
  const webhooks = result.webhooks.map((row) => ({
    noisyAlerts: row.noisyAlerts,
    model: webhookModel({
      noisyAlerts: row.noisyAlerts,
      maxInFlight: maxInFlightLimits.fallback,
      stallsToOpen,
      batchSize: deliverer?.batchSize ?? 10,
    }),
  }));
  const burstInput = {
    dynamoPerFire: perFire.dynamo,
    sqsPerFire: perFire.sqs,
    dueShards: dispatchSettingLimits.dueShards.fallback,
    duePageSize: dispatchSettingLimits.duePageSize.fallback,
    firstListing: firstListingSchedules,
    fireConcurrency: FIRE_CONCURRENCY.fallback,
    batchSize: fireWorker?.batchSize ?? 10,
    schedulesPerMessage,
  };
  const burst = burstModel({ due: 10_000, ...burstInput });
  const schedules = result.schedules
    .filter((row) => row.noisyDue > 0)
    .map((row) => ({
      row,
      model: scheduleModel({
        quietDue: row.quietDue,
        quietSchedulesEach,
        shardBlockSize,
        noisyDue: row.noisyDue,
        ...burstInput,
        burst,
        tenantWriteUnitsPerFire: aws.tableWriteUnitsPerFire,
      }),
    }));
  return [
    `### Model on AWS\n\nThe same cases with the stack's defaults (the deliverer's event source as AWS starts it, ${maxInFlightLimits.fallback} attempts in flight per endpoint, the breaker opening after ${stallsToOpen} stalls; ${burstInput.dueShards} shards, ${burstInput.fireConcurrency} fire workers), the request counts of the code, and these assumptions. Arithmetic in bench/noisy-model.ts; "without" is the same wait with one queue served in arrival order, no endpoint limits and a tenant's schedules on one shard, as before this issue.`,
    markdownTable(
      ['assumption', 'value', 'source'],
      [
        [
          'event source: concurrent batches at first, added per minute',
          `${aws.initialConcurrency}, ${aws.concurrencyAddedPerSecond * 60}`,
          '[Configuring scaling behavior for SQS event source mappings](https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html)',
        ],
        [
          'fair queue: a tenant is noisy with more than this share of the messages in flight, and at least',
          `${aws.fairShare * 100}%, ${aws.fairInFlight}`,
          '[How Amazon SQS fair queues work](https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-fair-queues-detailed.html)',
        ],
        [
          'a receiver that never answers holds its attempt',
          `${aws.receiverTimeoutMs / 1000} s`,
          'spec 8 (the 10-second time-out)',
        ],
        ['a healthy receiver answers in', `${aws.receiverAnswerMs} ms`, 'assumed (a POST over the internet)'],
        [
          'DynamoDB request; SQS request; invocation overhead',
          `${aws.dynamoRequestMs} ms; ${aws.sqsRequestMs} ms; ${aws.invocationOverheadMs} ms`,
          'as in the burst model (docs/schedules.md, At scale)',
        ],
        [
          "writes a second one tenant's partition takes; per fire on it (claim, run)",
          `${aws.tenantPartitionWriteUnitsPerSecond}; ${aws.tableWriteUnitsPerFire}`,
          '[DynamoDB warm throughput scenarios](https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/warm-throughput-scenarios.html)',
        ],
        [
          'requests per fire (tick and workers)',
          `${perFire.dynamo} DynamoDB, ${perFire.sqs} SQS`,
          'measured on the twin (Schedule bursts)',
        ],
      ],
    ),
    markdownTable(
      [
        'webhooks: noisy alerts',
        'quiet delivery s',
        'batches the noisy endpoint holds',
        'its breaker opens after s',
        'noisy seen after ms',
        'budget',
        'without: quiet waits s',
      ],
      webhooks.map(({ noisyAlerts, model }) => [
        noisyAlerts === 0 ? 'none (alone)' : noisyAlerts.toLocaleString('en'),
        seconds(noisyAlerts === 0 ? model.aloneMs : model.besideMs),
        noisyAlerts === 0 ? '' : model.heldBatches,
        noisyAlerts === 0 ? '' : fixed(model.openAfterSeconds, 0),
        noisyAlerts === 0 ? '' : fixed(model.noisyDetectedMs, 0),
        noisyAlerts === 0 ? '' : pass(model.withinBudget),
        fixed(model.withoutMeasuresSeconds, 1),
      ]),
    ),
    markdownTable(
      [
        'schedules: noisy due',
        'quiet lateness alone s',
        'beside s',
        'pages listed before the first send',
        'after it',
        'a noisy batch holds a worker s',
        'noisy last fire s',
        'budget',
        'without: quiet late s',
      ],
      schedules.map(({ row, model }) => [
        row.noisyDue.toLocaleString('en'),
        fixed(model.aloneSeconds, 2),
        fixed(model.besideSeconds, 2),
        model.firstListingPages,
        model.pagesAhead,
        fixed(model.noisyBatchSeconds, 2),
        fixed(model.noisyLastSeconds, 1),
        pass(model.withinBudget),
        fixed(model.withoutMeasuresSeconds, 1),
      ]),
    ),
  ].join('\n\n');
}

export function noisySection(result: NoisyResult): string {
  return [
    `${noisyHeading}\n\nOne tenant must not hold back another's webhooks or schedules (issue 23). On the twin, with the production retry schedule and breaker: the deliverer runs ${startingBatches} batches at once and the fire worker ${FIRE_CONCURRENCY.fallback}, behind the twin's fair queue, with DynamoDB Local's requests taken in turns per partition (docs/architecture.md says where the twin only approximates SQS and DynamoDB); ${maxInFlightLimits.fallback} attempts in flight per endpoint. \`npm run bench -- noisy\` measures this section alone and rewrites only it.`,
    `**Webhooks.** A quiet tenant fires an alert every 0.5 s, 80 in all, to a receiver that answers at once; beside it, a noisy tenant fires 300 or 3,000 alerts (25 at a time, starting 2 s before) to a receiver that takes every request and never answers, so each of its attempts waits out the 10-second time-out. Latency is from the quiet fire's 202 (queued) to its receiver having it.`,
    webhookTable(result.webhooks),
    `**Schedules.** ${(result.schedules[0]?.quietDue ?? 0) / (result.schedules[0]?.rounds ?? 1)} schedules of 20 quiet tenants due at a minute, alone, then beside one tenant with 10,000 due at the same minute (its ids 1 to 10,000, so spread over every shard; created before them, so its entries come first in each turn of every shard). The tick runs at the slot; lateness is fire time minus slot. Each case is measured in ${result.schedules[0]?.rounds ?? 0} rounds (a minute each, the cases in turn): fired / due counts them all, the other figures are the rounds' medians.`,
    scheduleTable(result.schedules),
    modelSection(result),
  ].join('\n\n');
}

/** `npm run bench -- noisy`, and the full run's last step: measures in a process of its own, then puts the section in place of the report's. */
export async function rewriteNoisySection(reportFile: string, environment: NodeJS.ProcessEnv): Promise<void> {
  const result = await measureInOwnProcess<NoisyResult>('noisy.ts', environment);
  await replaceSection(reportFile, noisyHeading, noisySection(result));
}

/** Runs a bench script of bench/ in a process of its own (a twin serves one process) and parses the JSON it prints. */
export async function measureInOwnProcess<Result>(script: string, environment: NodeJS.ProcessEnv): Promise<Result> {
  const projectRoot = fileURLToPath(new URL('..', import.meta.url));
  const output = await runForStdout(process.execPath, ['--import', 'tsx', fileURLToPath(new URL(script, import.meta.url))], {
    cwd: projectRoot,
    env: environment,
  });
  return JSON.parse(output) as Result;
}

/** Prints a section and puts it in place of the report's section under `heading` (at the end, when it has none). */
export async function replaceSection(reportFile: string, heading: string, section: string): Promise<void> {
  console.log(`\n${section}\n`);
  const markdown = await readFile(reportFile, 'utf8');
  const start = markdown.indexOf(`${heading}\n`);
  const end = start === -1 ? -1 : markdown.indexOf('\n## ', start + heading.length);
  const rewritten =
    start === -1
      ? `${markdown.trimEnd()}\n\n${section}\n`
      : `${markdown.slice(0, start)}${section}\n${end === -1 ? '' : markdown.slice(end)}`;
  await writeFile(reportFile, rewritten);
}
