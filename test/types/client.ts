/**
 * Compile-time checks of the typed client (`tsc`, in `npm run lint`): the calls below are wrong on
 * purpose, and each `@ts-expect-error` fails the build if the client ever accepts it.
 */
import {
  agentClient,
  type ClientEvent,
  type ClientEventOf,
  type components,
  integratorClient,
  must,
  tenantClient,
} from '../../client/src/index.ts';

const integrator = integratorClient('cli_x', { baseUrl: 'http://localhost:3000' });
const tenant = tenantClient('ten_x', { baseUrl: 'http://localhost:3000' });
const agent = agentClient('agt_x', { baseUrl: 'http://localhost:3000' });

type Block = components['schemas']['alert-webhook']['content'][number];
type Trigger = components['schemas']['schedule.v2.trigger'];

/** Blocks and triggers are tagged unions: their tag narrows them to their own shape. */
export const contentOf = (block: Block): string => {
  switch (block.type) {
    case 'text':
    case 'ai':
      return block.generated.text;
    case 'report':
      return block.generated.pdf ?? block.generated.xlsx ?? '';
    case 'chart':
      return 'kind' in block.generated ? block.generated.kind : block.generated.chart;
  }
};
export const periodOf = (trigger: Trigger): number => {
  switch (trigger.type) {
    case 'Hour':
    case 'Minute':
    case 'Month':
    case 'Week':
      return trigger.period;
    case 'Day':
      return 1;
  }
};
/** The integrator's events are a tagged union too: `type` narrows `data` (docs/events.md). */
export const subjectOf = (event: ClientEvent): string => {
  switch (event.type) {
    case 'rollout.wave_finished':
    case 'rollout.finished':
    case 'rollout.paused':
      return `rollout ${event.data.rolloutId}`;
    case 'tenant.apply_failed':
    case 'run.failed':
    case 'schedule.missed':
    case 'webhook.endpoint_disabled':
      return `tenant ${event.data.tenantId}`;
  }
};
export const failedRun = (event: ClientEventOf<'run.failed'>): number => event.data.runId;
// @ts-expect-error a run.failed event has no rollout
export const noRollout = (event: ClientEventOf<'run.failed'>) => event.data.rolloutId;
export const day: Trigger = { type: 'Day', start_when: '08:00' };
// @ts-expect-error a Month trigger needs its day of the month
export const month: Trigger = { type: 'Month', start_when: '08:00' };
// @ts-expect-error a text block's content is its text
export const wrongBlock: Block = { type: 'text', nome: 'x', generated: { pdf: 'https://a.example/b' } };

export async function wrongOnPurpose() {
  // @ts-expect-error a misspelled field (ativ) is not a creation's field
  await integrator.POST('/tenants', { body: { nome: 'Acme', ativ: true } });
  // @ts-expect-error nome is a string
  await integrator.POST('/tenants', { body: { nome: 1, ativo: true } });
  // @ts-expect-error a path the API does not have
  await tenant.GET('/tenant/nothing');
  // @ts-expect-error a tenant route is not on the integrator's client (a client token would be answered 403)
  await integrator.GET('/tenant');
  // @ts-expect-error nor an integrator route on the tenant's
  await tenant.GET('/tenants');
  // @ts-expect-error an agent calls the agent routes only
  await agent.GET('/tenant');
  // What any token may call, and what both a client and a tenant token may.
  await integrator.GET('/health');
  await tenant.GET('/whoami');
  await integrator.GET('/whoami');
  // @ts-expect-error the path parameter is an integer
  await tenant.GET('/tenant/users/{id}', { params: { path: { id: 'ana' } } });
  // Filters are typed as their rows declare them: a status of the list, an integer agent, a boolean ativo.
  await tenant.GET('/tenant/runs', { params: { query: { status: 'failed', agent: 1, flowId: 2 } } });
  // @ts-expect-error a status runs do not have
  await tenant.GET('/tenant/runs', { params: { query: { status: 'done' } } });
  // @ts-expect-error ativo is a boolean
  await integrator.GET('/tenants', { params: { query: { ativo: 'yes' } } });
  // @ts-expect-error a status deliveries do not have
  await tenant.GET('/tenant/deliveries', { params: { query: { status: 'lost' } } });
  const retried = await must(tenant.POST('/tenant/runs/{id}/retry', { params: { path: { id: 1 } } }));
  const retryOf: number = retried.data.retryOf;

  const created = await must(integrator.POST('/tenants', { body: { nome: 'Acme', ativo: true } }));
  const token: string = created.data.token;
  // @ts-expect-error the answer has no such field
  void created.data.tokn;
  const own = await must(tenant.GET('/tenant'));
  const flows: number[] = own.data.flows.map((flow) => flow.id);
  // A schedule answers JSON (or YAML when asked): the client reads JSON, typed, with no union to narrow.
  const schedule = await must(tenant.GET('/tenant/schedules/{id}', { params: { path: { id: 1 } } }));
  const triggers = schedule.data.body.triggers.map(periodOf);
  return { token, flows, triggers, retryOf };
}
