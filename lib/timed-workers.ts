import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { type TimedFunction, timedFunctions } from '#functions/routes.ts';
import { consumerIdOf } from './construct-ids.ts';
import { type DeploymentSettings, reservedConcurrency } from './deployment-settings.ts';
import type { FunctionRoles } from './function-roles.ts';
import { type FunctionStacks, functionAreaOf } from './function-stacks.ts';
import { workerEntry } from './function-bundles.ts';
import { type NamedFunction, ProjectFunction } from './project-function.ts';
import type { ServiceQueues } from './service-queues.ts';
import type { ServiceTable } from './service-table.ts';

export interface TimedWorkersProps {
  /** Whether the timers reserve their concurrency (lib/throttling.ts). */
  settings: DeploymentSettings;
  table: ServiceTable;
  queues: ServiceQueues;
  roles: FunctionRoles;
  functionStacks: FunctionStacks;
}

/**
 * A timer's EventBridge schedule: at every whole multiple of its period from the hour, second 0, as the twin's
 * clock (local/clock.ts). `rate(1 minute)` would run at a second fixed by when the rule was created, so every
 * schedule could fire up to 59 s late, for good.
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-scheduled-rule-pattern.html
 */
export function timerSchedule(timed: Pick<TimedFunction, 'handler' | 'everyMinutes'>): Schedule {
  const { everyMinutes } = timed;
  if (!Number.isInteger(everyMinutes) || everyMinutes < 1 || 60 % everyMinutes !== 0)
    throw new Error(`${timed.handler}: everyMinutes must divide an hour (1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 or 60)`);
  return Schedule.cron({ minute: everyMinutes === 1 ? '*' : everyMinutes === 60 ? '0' : `*/${everyMinutes}` });
}

/**
 * A tick that could not run is not worth running late: the next one redoes its work. Neither EventBridge nor
 * Lambda's asynchronous invocation retries it, so a failed tick never runs beside the next one; an event older
 * than the period is dropped.
 */
export const timerRetries = (timed: Pick<TimedFunction, 'everyMinutes'>) => ({
  retryAttempts: 0,
  maxEventAge: Duration.minutes(timed.everyMinutes),
});

/** One function per timed function of the route table (the schedule dispatcher), run by an EventBridge rule. */
export class TimedWorkers {
  /** Under their construct ids, with their period (for the alarm on a timer that stops running). */
  readonly functions: (NamedFunction & { everyMinutes: number })[] = [];

  constructor(props: TimedWorkersProps) {
    const reservations = reservedConcurrency(props.settings);
    for (const timed of timedFunctions) {
      const id = consumerIdOf(timed.handler);
      const sends = timed.sends ?? [];
      const scope = props.functionStacks.scopeFor(functionAreaOf(timed));
      const fn = new ProjectFunction(scope, id, {
        entry: workerEntry(timed.handler),
        description: `Every ${timed.everyMinutes} minute(s): ${timed.summary}`,
        environment: { ...props.table.environment, ...props.queues.urlVariables(sends) },
        timeoutSeconds: timed.timeoutSeconds,
        // Two at most (a run still finishing when the next starts), and always there: a flood on the API
        // cannot hold the dispatcher or the sweeper back.
        reservedConcurrency: reservations.get(timed.handler),
        role: props.roles.roleFor({ table: timed.table, sends }),
      });
      const live = props.functionStacks.live(fn, id);
      live.configureAsyncInvoke(timerRetries(timed));
      new Rule(scope, `${id}Rule`, {
        description: `Runs ${timed.handler} every ${timed.everyMinutes} minute(s), at second 0`,
        schedule: timerSchedule(timed),
        targets: [new LambdaFunction(live, timerRetries(timed))],
      });
      this.functions.push({ name: id, fn, everyMinutes: timed.everyMinutes });
    }
  }
}
