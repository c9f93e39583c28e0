import type { ScheduleFile, Trigger } from '../../functions/core/schedules/schedule-types.ts';
import { api, newClient, newTenant } from './api.ts';
import { publish, retailBundle } from './templates.ts';

/** A tenant with the retail template applied, and the ids of its flows by key. */
export async function tenantWithFlows(options: { granularity?: 'hours' | 'minutes' } = {}) {
  const client = await newClient();
  const templateId = await publish(client.token, retailBundle());
  const tenant = await newTenant(client.token, { templateId });
  if (options.granularity) {
    const patched = await api('PATCH', `/tenants/${tenant.id}`, {
      token: client.token,
      body: { schedulingGranularity: options.granularity },
    });
    if (patched.status !== 200) throw new Error(`PATCH failed: ${patched.status} ${JSON.stringify(patched.body)}`);
  }
  const own = (await api('GET', '/tenant', { token: tenant.token })).body.data;
  const flows: Record<string, number> = Object.fromEntries(
    own.flows.map((flow: { key: string; id: number }) => [flow.key, flow.id]),
  );
  return { client, tenant, flows };
}

/** A valid schedule file: a daily trigger at 06:30 in São Paulo over the given flows. */
export function scheduleFile(id: number, flowIds: number[], triggers: Trigger[] = [{ type: 'Day', start_when: '06:30' }]) {
  return {
    fileName: `schedule-${id}.yaml`,
    header: { id, kind: 'schedule', nome: 'Nightly' },
    body: {
      nome: 'Nightly loads',
      ativo: true,
      timezone: 'America/Sao_Paulo',
      flows: flowIds.map((flowId) => ({ flow_etl_id: flowId, context: 'full' })),
      triggers,
      tags: ['nightly'],
    },
  } satisfies ScheduleFile;
}
