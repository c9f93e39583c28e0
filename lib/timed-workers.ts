import { Duration, type Stack } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { timedFunctions } from '#functions/routes.ts';
import { consumerIdOf } from './construct-ids.ts';
import { type DeploymentSettings, reservedConcurrency } from './deployment-settings.ts';
import type { FunctionRoles } from './function-roles.ts';
import { type NamedFunction, ProjectFunction } from './project-function.ts';
import type { ServiceQueues } from './service-queues.ts';
import type { ServiceTable } from './service-table.ts';

export interface TimedWorkersProps {
  /** Whether the timers reserve their concurrency (lib/throttling.ts). */
  settings: DeploymentSettings;
  table: ServiceTable;
  queues: ServiceQueues;
  roles: FunctionRoles;
}

/** One function per timed function of the route table (the schedule dispatcher), run by an EventBridge rule. */
export class TimedWorkers {
  /** Under their construct ids, with their period (for the alarm on a timer that stops running). */
  readonly functions: (NamedFunction & { everyMinutes: number })[] = [];

  constructor(stack: Stack, props: TimedWorkersProps) {
    const reservations = reservedConcurrency(props.settings);
    for (const timed of timedFunctions) {
      const id = consumerIdOf(timed.handler);
      const sends = timed.sends ?? [];
      const fn = new ProjectFunction(stack, id, {
        entry: `functions/workers/${timed.handler}.ts`,
        description: `Every ${timed.everyMinutes} minute(s): ${timed.summary}`,
        environment: { ...props.table.environment, ...props.queues.urlVariables(sends) },
        timeoutSeconds: timed.timeoutSeconds,
        // Two at most (a run still finishing when the next starts), and always there: a flood on the API
        // cannot hold the dispatcher or the sweeper back.
        reservedConcurrency: reservations.get(timed.handler),
        role: props.roles.roleFor({ table: timed.table, sends }),
      });
      new Rule(stack, `${id}Rule`, {
        description: `Runs ${timed.handler} every ${timed.everyMinutes} minute(s)`,
        schedule: Schedule.rate(Duration.minutes(timed.everyMinutes)),
        // A tick that could not run is not worth running late: the next one fires what is due.
        targets: [new LambdaFunction(fn, { retryAttempts: 2, maxEventAge: Duration.minutes(2) })],
      });
      this.functions.push({ name: id, fn, everyMinutes: timed.everyMinutes });
    }
  }
}
