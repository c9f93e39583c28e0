import { randomUUID } from 'node:crypto';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { parseFireMessage } from '#functions/core/schedules/fire.ts';
import type { DueSchedule } from '#functions/core/schedules/schedule-repository.ts';
import type { ScheduleFile, Trigger } from '#functions/core/schedules/schedule-types.ts';
import { queueUrlVariable } from '#functions/core/store/queue-definitions.ts';
import { api, newClient, newTenant } from './api.ts';
import { withEnvironment } from './scoped-environment.ts';
import { eventually, publish, retailBundle } from './templates.ts';

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

/**
 * Waits until the fire queue holds no message, visible or in flight, twice in a row a beat apart:
 * every schedule a tick sent has been handled by the twin's fire worker (or dead-lettered).
 */
export async function fireQueueDrained(): Promise<void> {
  const sqs = new SQSClient({ endpoint: process.env.SQS_ENDPOINT });
  const pending = async () => {
    const { Attributes = {} } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: process.env[queueUrlVariable('fire')],
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return Number(Attributes.ApproximateNumberOfMessages) + Number(Attributes.ApproximateNumberOfMessagesNotVisible);
  };
  try {
    await eventually(async () => ((await pending()) === 0 ? true : undefined), 60_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await eventually(async () => ((await pending()) === 0 ? true : undefined), 60_000);
  } finally {
    sqs.destroy();
  }
}

/**
 * Runs `work` with the fire queue swapped for a queue of its own that no worker reads, so nothing
 * a tick lists fires; `sent()` takes back what was sent there since its last call, in order.
 */
export async function withProbeFireQueue<T>(work: (sent: () => Promise<DueSchedule[]>) => Promise<T>): Promise<T> {
  const sqs = new SQSClient({ endpoint: process.env.SQS_ENDPOINT });
  const variable = queueUrlVariable('fire');
  const { QueueUrl: probeUrl } = await sqs.send(new CreateQueueCommand({ QueueName: `fire-probe-${randomUUID()}` }));
  if (!probeUrl) throw new Error('the queue service gave the probe queue no URL');
  const sent = async () => {
    const schedules: DueSchedule[] = [];
    for (;;) {
      const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: probeUrl, MaxNumberOfMessages: 10 }));
      if (Messages.length === 0) return schedules;
      for (const message of Messages) {
        schedules.push(...parseFireMessage(message.Body ?? '').schedules);
        await sqs.send(new DeleteMessageCommand({ QueueUrl: probeUrl, ReceiptHandle: message.ReceiptHandle }));
      }
    }
  };
  try {
    return await withEnvironment({ [variable]: probeUrl }, () => work(sent));
  } finally {
    await sqs.send(new DeleteQueueCommand({ QueueUrl: probeUrl }));
    sqs.destroy();
  }
}
