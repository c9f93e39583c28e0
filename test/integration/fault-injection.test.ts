/**
 * Crash safety by brute force (FoundationDB's simulation testing, Jepsen's invariant checks, in
 * miniature). Every route and worker of the route table that writes is run once cleanly, which
 * counts its writes (to the table, the queues and the payload bucket); then, for every k, once with
 * the store failing its k-th write and once with the function stopped right after its k-th write
 * (nothing after it runs, no clean-up either), each followed by what would happen next: the retry a
 * client or the queue makes (the same Idempotency-Key, the same message), after the stopped
 * attempt's deadline, and the follow-up sweeper. Then the invariants: the retry answers what the
 * clean run answered (idempotent requests) or at least no 5xx, and every item the case wrote is as
 * the clean run left its own — nothing duplicated, nothing half-written, no lock or claim still
 * held, every acknowledged effect there. The list of cases comes from the route table: a writing
 * route without a scenario fails the run. Every item a case writes is of a declared entity
 * (store/entity-declarations.ts), and every declared entity is written by some clean run, or names
 * why not: an item the declarations do not know, or one no case writes, fails the run.
 */
import { randomUUID } from 'node:crypto';
import { CreateQueueCommand, DeleteQueueCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { clientOwner, tenantOwner } from '#functions/core/webhooks/owner.ts';
import { type AuditRecord, auditRecordOf, recordHash } from '#functions/core/audit/audit-record.ts';
import { updateDeliveryState, findDelivery } from '#functions/core/alerts/alert-repository.ts';
import { createClient } from '#functions/core/clients/clients.ts';
import { findRollout } from '#functions/core/rollouts/rollout-repository.ts';
import { recordFollowUp, followUpShards, listFollowUps, type FollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import { finishFollowUp } from '#functions/core/follow-ups/sweeper.ts';
import type { LoadMessage } from '#functions/core/reload/reload.ts';
import { getAll } from '#functions/core/store/dynamo.ts';
import type { DeclaredEntity } from '#functions/core/store/entities.ts';
import { declaredEntityOf, entities } from '#functions/core/store/entity-declarations.ts';
import { type QueueName, queueUrlVariable } from '#functions/core/store/queue-definitions.ts';
import { findTenant, updateTenantActive } from '#functions/core/tenants/tenant-repository.ts';
import { queueConsumers, routeKey, routes, timedFunctions } from '#functions/routes.ts';
import { invoke } from '#local/lambda-context.ts';
import {
  type FaultMode,
  inParallel,
  installFaultInjection,
  invocationTrace,
  newTrace,
  type Trace,
  traced,
} from '#test/support/faults.ts';
import { type Answer, type Call, callRoute } from '#test/support/in-process.ts';
import { scheduleFile } from '#test/support/schedules.ts';
import { retailBundle } from '#test/support/templates.ts';
import { startReceiver } from '#test/support/webhook-receiver.ts';

/** What a case works on: a client with one tenant that has one of everything its scenario needs. */
interface Party {
  clientId: number;
  client: string;
  templateId: number;
  tenantId: number;
  tenant: string;
  dominio: string;
  agent: string;
  flowIds: number[];
  tableIds: number[];
  userId: number;
  otherUserId: number;
  login: string;
  groupId: number;
  datamartId: number;
  alertId: number;
  deliveryId: number;
  /** A delivery of an event to the client's webhook. */
  eventDeliveryId: number;
  scheduleId: number;
  runId: number;
  /** A rollout of the template's second version to the tenant. */
  rolloutId: number;
  loginToken: string;
  followUp: FollowUp;
}

/** The steps that build a party, each after those it names. */
type Step =
  | 'template'
  | 'tenant'
  | 'bareTenant'
  | 'inactiveTenant'
  | 'agent'
  | 'users'
  | 'group'
  | 'datamart'
  | 'alert'
  | 'delivery'
  | 'failedDelivery'
  | 'events'
  | 'failedEvent'
  | 'schedule'
  | 'run'
  | 'failedRun'
  | 'login'
  | 'rollout'
  | 'pausedRollout'
  | 'pendingProvision'
  | 'rotatedTenant';

interface Scenario {
  needs: Step[];
  /** A route's request; the retry is the same request. */
  call?: (party: Party) => Call;
  /** A worker's event, made once per case: the retry is the same event (the queue's redelivery). */
  event?: (party: Party) => Promise<unknown> | unknown;
  /** A worker's invocation of that event. */
  work?: (party: Party, event: unknown, timeoutMs: number) => Promise<unknown>;
  /** More checks once the retry and the sweeper ran. */
  check?: (party: Party, retried: Answer | undefined, trace: Trace) => Promise<void>;
  /** Item kinds (normalized keys) that a retry may add by design: compared by presence, not by count. */
  repeatable?: string[];
}

const receiver = await startReceiver();
const sqsClient = new SQSClient({ endpoint: process.env.SQS_ENDPOINT });
const probeQueues: string[] = [];

/** Every queue of this process goes to a queue of its own that no worker reads: nothing here is consumed behind the test's back. */
async function useProbeQueues(): Promise<void> {
  for (const name of ['reload', 'webhook', 'fire', 'rollout'] as QueueName[]) {
    const fifo = name === 'reload';
    const { QueueUrl } = await sqsClient.send(
      new CreateQueueCommand({
        QueueName: `fault-${name}-${randomUUID()}${fifo ? '.fifo' : ''}`,
        Attributes: fifo ? { FifoQueue: 'true' } : {},
      }),
    );
    process.env[queueUrlVariable(name)] = QueueUrl;
    probeQueues.push(QueueUrl as string);
  }
}

beforeAll(async () => {
  await useProbeQueues();
  installFaultInjection();
});

afterAll(async () => {
  for (const queueUrl of probeQueues) await sqsClient.send(new DeleteQueueCommand({ QueueUrl: queueUrl }));
  sqsClient.destroy();
  await receiver.close();
});

const json = (method: string, path: string, token: string, body?: unknown): Call => ({ method, path, token, body });

async function ok(call: Call): Promise<Answer> {
  const answer = await callRoute(call);
  if (answer.status >= 300) throw new Error(`${call.method} ${call.path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer;
}

const permissionsBody = (tableId: number) => ({
  permissions: [{ tableId, allowed: true, allow_export: false, expires_in: null, hidden_columns: [], filters: [] }],
});

/** Builds the party a scenario needs, through the routes (in this process), inside the case's trace. */
async function buildParty(needs: readonly Step[]): Promise<Party> {
  const has = (step: Step) => needs.includes(step);
  const party = {} as Party;
  const { client, token } = await createClient('fault-party');
  party.clientId = client.clientId;
  party.client = token;
  party.templateId = (await ok(json('POST', '/tenants/templates', token, retailBundle()))).body.data.id;
  if (has('events')) {
    await ok(json('PATCH', '/tenants/settings', token, { webhook: { url: receiver.url(`/events/${party.clientId}`) } }));
  }
  const tenantBody = has('bareTenant')
    ? { nome: 'Party', ativo: true }
    : { nome: 'Party', ativo: !has('inactiveTenant') && !has('pendingProvision'), templateId: party.templateId };
  const tenant = (await ok(json('POST', '/tenants', token, tenantBody))).body.data;
  party.tenantId = tenant.id;
  party.tenant = tenant.token;
  party.dominio = tenant.dominio;
  // Its token rotated (with the grace period): the one made with it is its previous token.
  if (has('rotatedTenant')) party.tenant = (await ok(json('POST', `/tenants/${party.tenantId}/token`, token))).body.data.token;
  if (has('pendingProvision')) {
    // Activated with its template pending, and the request stopped before applying it: the sweeper's work.
    const record = await findTenant(party.tenantId);
    if (!record) throw new Error('party tenant missing');
    party.followUp = { kind: 'provision', ownerId: party.tenantId, subjectId: party.tenantId, createdAt: 0 };
    await updateTenantActive(record, true, new Date().toISOString(), [recordFollowUp(party.followUp, 0)]);
    return party;
  }
  if (has('inactiveTenant') || has('bareTenant')) return party;
  const own = (await ok({ method: 'GET', path: '/tenant', token: party.tenant })).body.data;
  party.flowIds = own.flows.map((flow: { id: number }) => flow.id);
  party.tableIds = own.desks.flatMap((desk: { tables: Array<{ id: number }> }) => desk.tables.map((table) => table.id));
  if (has('agent') || has('run')) {
    party.agent = (await ok(json('POST', '/tenant/agents/1/token', party.tenant))).body.data.token;
    await ok({ method: 'POST', path: '/agent/heartbeat', token: party.agent });
  }
  if (has('users') || has('group') || has('datamart') || has('login')) {
    party.login = 'ana@party.io';
    party.userId = (await ok(json('POST', '/tenant/users', party.tenant, { login: party.login, nome: 'Ana' }))).body.data.id;
    party.otherUserId = (
      await ok(json('POST', '/tenant/users', party.tenant, { login: 'bia@party.io', nome: 'Bia' }))
    ).body.data.id;
  }
  if (has('group') || has('datamart')) {
    party.groupId = (await ok(json('POST', '/tenant/groups', party.tenant, { nome: 'Sales' }))).body.data.id;
    await ok(json('PUT', `/tenant/groups/${party.groupId}/members/${party.userId}`, party.tenant));
  }
  if (has('datamart')) {
    const body = { nome: 'Sales', tables: party.tableIds, owners: [party.userId] };
    party.datamartId = (await ok(json('POST', '/tenant/datamart', party.tenant, body))).body.data.id;
    const table = party.tableIds[0] as number;
    await ok(json('PUT', `/tenant/datamart/${party.datamartId}/user/${party.userId}`, party.tenant, permissionsBody(table)));
    await ok(json('PUT', `/tenant/datamart/${party.datamartId}/group/${party.groupId}`, party.tenant, permissionsBody(table)));
  }
  if (has('alert') || has('delivery') || has('failedDelivery')) {
    const webhook = { alertChannels: { webhook: { url: receiver.url(`/hook/${party.tenantId}`) } } };
    await ok(json('PATCH', '/tenant/settings', party.tenant, webhook));
    const alert = { nome: 'Stock low', channels: { webhook: true }, content: [] };
    party.alertId = (await ok(json('POST', '/tenant/alerts', party.tenant, alert))).body.data.id;
  }
  if (has('delivery') || has('failedDelivery')) {
    const send = json('POST', `/tenant/alerts/${party.alertId}/send`, party.tenant, { user: { id: 7, email: 'ana@party.io' } });
    party.deliveryId = (await ok(send)).body.data.id;
  }
  if (has('failedDelivery')) {
    const record = await findDelivery(tenantOwner(party.tenantId), party.deliveryId);
    if (!record || !(await updateDeliveryState(record, 'failed', undefined, 'Gave up', undefined))) {
      throw new Error('could not fail the party delivery');
    }
  }
  if (has('schedule')) {
    party.scheduleId = 7;
    await ok(json('PUT', '/tenant/schedules/7', party.tenant, scheduleFile(7, party.flowIds.slice(0, 1))));
  }
  if (has('run')) {
    await invokeWorker('reload-worker', sqsEvent([loadMessage(party, party.flowIds[0] as number, 'party-run')]));
    const runs = (await ok({ method: 'GET', path: '/tenant/runs', token: party.tenant })).body.data;
    party.runId = runs[0].id;
  }
  if (has('failedRun')) await ok(json('POST', `/agent/runs/${party.runId}`, party.agent, { status: 'failed' }));
  if (has('failedEvent')) {
    // The agent's failure report queues the `run.failed` event, whose delivery then gave up.
    await ok(json('POST', `/agent/runs/${party.runId}`, party.agent, { status: 'failed' }));
    party.eventDeliveryId = (await ok({ method: 'GET', path: '/tenants/deliveries', token })).body.data[0].id;
    const record = await findDelivery(clientOwner(party.clientId), party.eventDeliveryId);
    if (!record || !(await updateDeliveryState(record, 'failed', undefined, 'Gave up', undefined))) {
      throw new Error('could not fail the party event delivery');
    }
  }
  if (has('rollout') || has('pausedRollout')) {
    // Version 2 rolled out to the tenant, with its reloads: its step waits on the probe queue, which no worker reads.
    await ok(json('PUT', `/tenants/templates/${party.templateId}`, token, { ...retailBundle(), nome: 'Retail 2' }));
    const rollouts = `/tenants/templates/${party.templateId}/rollouts`;
    party.rolloutId = (await ok(json('POST', rollouts, token, { tenants: 'all', reload: true }))).body.data.id;
    if (has('pausedRollout')) await ok(json('POST', `${rollouts}/${party.rolloutId}/pause`, token));
  }
  if (has('login')) {
    party.loginToken = (await ok(json('POST', '/tenant/login', party.tenant, { login: party.login }))).body.token;
  }
  return party;
}

const loadMessage = (party: Party, flowId: number, batchId: string): LoadMessage => ({
  batchId,
  deduplicationId: `${batchId}-${flowId}`,
  tenantId: party.tenantId,
  agentId: 1,
  flowId,
  context: 'full',
  requestedAt: new Date().toISOString(),
});

let messageNumber = 0;
function sqsEvent(bodies: unknown[], group?: string): SQSEvent {
  const records = bodies.map((body): SQSRecord => {
    messageNumber += 1;
    return {
      messageId: `fault-message-${messageNumber}`,
      receiptHandle: `receipt-${messageNumber}`,
      body: JSON.stringify(body),
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.now()),
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
        ...(group ? { MessageGroupId: group } : {}),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:fault',
      awsRegion: 'us-east-1',
    };
  });
  return { Records: records };
}

type WorkerHandler = (event: unknown, context: unknown) => Promise<unknown>;
const workerModules = new Map<string, Promise<WorkerHandler>>();
async function invokeWorker(name: string, event: unknown, timeoutMs = 30_000): Promise<unknown> {
  let loaded = workerModules.get(name);
  if (!loaded) {
    const file = new URL(`../../functions/workers/${name}.ts`, import.meta.url);
    loaded = import(file.href).then((module: { handler: WorkerHandler }) => module.handler);
    workerModules.set(name, loaded);
  }
  return invoke(await loaded, event, name, timeoutMs);
}

/** A fire message for the party's schedule, due at its next 06:30 in São Paulo. */
async function fireEvent(party: Party): Promise<SQSEvent> {
  const schedule = (await ok({ method: 'GET', path: `/tenant/schedules/${party.scheduleId}`, token: party.tenant })).headers;
  const listed = (await ok({ method: 'GET', path: '/tenant/schedules', token: party.tenant })).body.data;
  const dueAt = listed.find((entry: { id: number }) => entry.id === party.scheduleId)?.nextFireAt as string;
  if (!dueAt || !schedule) throw new Error('party schedule has no next fire');
  const now = Date.parse(dueAt) + 5_000;
  return sqsEvent([
    { now, startedAt: Date.now(), schedules: [{ tenantId: party.tenantId, scheduleId: party.scheduleId, dueAt }] },
  ]);
}

/** The time-out a faulted rollout worker gets: enough for its one tenant's turn. */
const faultedWorkerMs = 3_000;

const scenarios: Record<string, Scenario> = {
  'POST /tenants': {
    needs: ['template'],
    call: (p) => json('POST', '/tenants', p.client, { nome: 'Faulty', ativo: true, templateId: p.templateId }),
    check: async (p, retried) => {
      const listed = (await ok({ method: 'GET', path: '/tenants', token: p.client })).body.data;
      expect(listed.filter((tenant: { nome: string }) => tenant.nome === 'Faulty')).toHaveLength(1);
      const own = (await ok({ method: 'GET', path: '/tenant', token: retried?.body.data.token })).body.data;
      expect(own).toMatchObject({ id: retried?.body.data.id, pendingTemplateId: null, template: { id: p.templateId } });
    },
  },
  'POST /tenants/delete': { needs: ['agent'], call: (p) => json('POST', '/tenants/delete', p.client, { id: p.tenantId }) },
  'DELETE /tenants': { needs: ['agent'], call: (p) => json('DELETE', '/tenants', p.client, { id: p.tenantId }) },
  'POST /tenants/{id}/deactivate': {
    needs: ['tenant'],
    call: (p) => json('POST', `/tenants/${p.tenantId}/deactivate`, p.client),
  },
  'POST /tenants/{id}/activate': {
    needs: ['inactiveTenant'],
    call: (p) => json('POST', `/tenants/${p.tenantId}/activate`, p.client),
    check: async (p) => {
      const own = (await ok({ method: 'GET', path: '/tenant', token: p.tenant })).body.data;
      expect(own).toMatchObject({ ativo: true, pendingTemplateId: null, template: { id: p.templateId } });
    },
  },
  'PATCH /tenants/{id}': {
    needs: ['tenant'],
    call: (p) =>
      json('PATCH', `/tenants/${p.tenantId}`, p.client, {
        nome: 'Renamed',
        development_variables: [{ key: 'DB_HOST', value: 'db.local' }],
        schedulingGranularity: 'minutes',
      }),
  },
  'POST /tenants/{id}/token': { needs: ['tenant'], call: (p) => json('POST', `/tenants/${p.tenantId}/token`, p.client) },
  'DELETE /tenants/{id}/token/previous': {
    needs: ['rotatedTenant'],
    call: (p) => json('DELETE', `/tenants/${p.tenantId}/token/previous`, p.client),
  },
  'POST /tenants/templates': {
    needs: [],
    call: (p) => json('POST', '/tenants/templates', p.client, { ...retailBundle(), nome: 'Retail, again' }),
  },
  'PUT /tenants/templates/{id}': {
    needs: [],
    call: (p) => json('PUT', `/tenants/templates/${p.templateId}`, p.client, { ...retailBundle(), nome: 'Retail 2' }),
  },
  'DELETE /tenants/templates/{id}': {
    needs: [],
    call: (p) => json('DELETE', `/tenants/templates/${p.templateId}`, p.client),
  },
  'PUT /tenants/templates/default': {
    needs: [],
    call: (p) => json('PUT', '/tenants/templates/default', p.client, { templateId: p.templateId }),
  },
  'POST /tenants/templates/{id}/rollouts': {
    needs: ['tenant'],
    call: (p) => json('POST', `/tenants/templates/${p.templateId}/rollouts`, p.client, { tenants: 'all', waveSize: 1 }),
    check: async (p, retried, trace) => {
      const listed = (await ok({ method: 'GET', path: `/tenants/templates/${p.templateId}/rollouts`, token: p.client })).body
        .data;
      expect(listed.map((rollout: { id: number; state: string }) => [rollout.id, rollout.state])).toEqual([
        [retried?.body.data.id, 'running'],
      ]);
      // Its first step is on the queue, sent by the request or, when it stopped first, by the sweeper.
      const steps = trace.sent.filter((message) => message.queueUrl === process.env[queueUrlVariable('rollout')]);
      expect(new Set(steps.map((message) => message.body))).toEqual(
        new Set([JSON.stringify({ clientId: p.clientId, rolloutId: retried?.body.data.id })]),
      );
    },
  },
  'POST /tenants/templates/{id}/rollouts/{rolloutId}/pause': {
    needs: ['rollout'],
    call: (p) => json('POST', `/tenants/templates/${p.templateId}/rollouts/${p.rolloutId}/pause`, p.client),
  },
  'POST /tenants/templates/{id}/rollouts/{rolloutId}/resume': {
    needs: ['pausedRollout'],
    call: (p) => json('POST', `/tenants/templates/${p.templateId}/rollouts/${p.rolloutId}/resume`, p.client),
    check: async (p, _retried, trace) => {
      const steps = trace.sent.filter((message) => message.queueUrl === process.env[queueUrlVariable('rollout')]);
      // The start's step, and the resumption's (once or more: a second copy changes nothing).
      expect(steps.length).toBeGreaterThanOrEqual(2);
      expect(new Set(steps.map((message) => message.body))).toEqual(
        new Set([JSON.stringify({ clientId: p.clientId, rolloutId: p.rolloutId })]),
      );
    },
  },
  'POST /tenants/templates/{id}/rollouts/{rolloutId}/cancel': {
    needs: ['rollout'],
    call: (p) => json('POST', `/tenants/templates/${p.templateId}/rollouts/${p.rolloutId}/cancel`, p.client),
  },
  'POST /tenant/templates/apply': {
    needs: ['bareTenant'],
    call: (p) => json('POST', '/tenant/templates/apply', p.tenant, { templateId: p.templateId }),
  },
  'POST /tenant/templates/reload': {
    needs: ['agent'],
    call: (p) =>
      json('POST', '/tenant/templates/reload', p.tenant, {
        items: p.flowIds.map((flowId) => ({ flowId, tokenId: 1, context: 'full' })),
      }),
    check: async (p, _retried, trace) => {
      // Every attempt sends the same deduplication ids: SQS and the worker's markers absorb the repeats.
      const ids = new Set(trace.sent.filter((message) => message.deduplicationId).map((message) => message.deduplicationId));
      expect(ids.size).toBe(p.flowIds.length);
    },
  },
  'POST /tenant/runs/{id}/retry': {
    needs: ['run', 'failedRun'],
    call: (p) => json('POST', `/tenant/runs/${p.runId}/retry`, p.tenant),
    check: async (p, _retried, trace) => {
      // Every attempt sends the same load, with the same deduplication id: SQS and the worker's markers absorb the repeats.
      const loads = trace.sent.filter((message) => message.deduplicationId);
      expect(new Set(loads.map((message) => message.deduplicationId)).size).toBe(1);
    },
  },
  // The party's agent token was had by a rotation: the default agent's first token is its previous one.
  'DELETE /tenant/agents/{id}/token/previous': {
    needs: ['agent'],
    call: (p) => json('DELETE', '/tenant/agents/1/token/previous', p.tenant),
  },
  'POST /tenant/agents': {
    needs: ['tenant'],
    call: (p) => json('POST', '/tenant/agents', p.tenant, { nome: 'warehouse' }),
    check: async (p) => {
      const agents = (await ok({ method: 'GET', path: '/tenant/agents', token: p.tenant })).body.data;
      expect(agents.map((agent: { nome: string }) => agent.nome).sort()).toEqual(['default', 'warehouse']);
    },
  },
  'POST /tenant/agents/{id}/token': { needs: ['tenant'], call: (p) => json('POST', '/tenant/agents/1/token', p.tenant) },
  'POST /tenant/users': {
    needs: ['tenant'],
    call: (p) => json('POST', '/tenant/users', p.tenant, { login: 'new@party.io', nome: 'New' }),
  },
  'PATCH /tenant/users/{id}': {
    needs: ['users'],
    call: (p) => json('PATCH', `/tenant/users/${p.userId}`, p.tenant, { login: 'renamed@party.io' }),
  },
  'DELETE /tenant/users/{id}': { needs: ['datamart'], call: (p) => json('DELETE', `/tenant/users/${p.userId}`, p.tenant) },
  'POST /tenant/groups': { needs: ['tenant'], call: (p) => json('POST', '/tenant/groups', p.tenant, { nome: 'Ops' }) },
  'DELETE /tenant/groups/{id}': { needs: ['datamart'], call: (p) => json('DELETE', `/tenant/groups/${p.groupId}`, p.tenant) },
  'PUT /tenant/groups/{id}/members/{userId}': {
    needs: ['group'],
    call: (p) => json('PUT', `/tenant/groups/${p.groupId}/members/${p.otherUserId}`, p.tenant),
  },
  'DELETE /tenant/groups/{id}/members/{userId}': {
    needs: ['group'],
    call: (p) => json('DELETE', `/tenant/groups/${p.groupId}/members/${p.userId}`, p.tenant),
  },
  'POST /tenant/datamart': {
    needs: ['users'],
    call: (p) =>
      json('POST', '/tenant/datamart', p.tenant, { nome: 'Ops', tables: p.tableIds, owners: [p.userId, p.otherUserId] }),
  },
  'PATCH /tenant/datamart/{id}': {
    needs: ['datamart'],
    call: (p) =>
      json('PATCH', `/tenant/datamart/${p.datamartId}`, p.tenant, { tables: p.tableIds.slice(1), owners: [p.otherUserId] }),
  },
  'DELETE /tenant/datamart/{id}': {
    needs: ['datamart'],
    call: (p) => json('DELETE', `/tenant/datamart/${p.datamartId}`, p.tenant),
  },
  'PUT /tenant/datamart/{id}/user/{userId}': {
    needs: ['datamart'],
    call: (p) =>
      json('PUT', `/tenant/datamart/${p.datamartId}/user/${p.userId}`, p.tenant, permissionsBody(p.tableIds[1] as number)),
  },
  'DELETE /tenant/datamart/{id}/user/{userId}': {
    needs: ['datamart'],
    call: (p) => json('DELETE', `/tenant/datamart/${p.datamartId}/user/${p.userId}`, p.tenant),
  },
  'PUT /tenant/datamart/{id}/group/{groupId}': {
    needs: ['datamart'],
    call: (p) =>
      json('PUT', `/tenant/datamart/${p.datamartId}/group/${p.groupId}`, p.tenant, permissionsBody(p.tableIds[1] as number)),
  },
  'DELETE /tenant/datamart/{id}/group/{groupId}': {
    needs: ['datamart'],
    call: (p) => json('DELETE', `/tenant/datamart/${p.datamartId}/group/${p.groupId}`, p.tenant),
  },
  'PUT /tenant/schedules/{id}': {
    needs: ['tenant'],
    call: (p) => json('PUT', '/tenant/schedules/8', p.tenant, scheduleFile(8, p.flowIds.slice(0, 2))),
  },
  'DELETE /tenant/schedules/{id}': {
    needs: ['schedule'],
    call: (p) => json('DELETE', `/tenant/schedules/${p.scheduleId}`, p.tenant),
  },
  'PATCH /tenant/settings': {
    needs: ['alert'],
    call: (p) =>
      json('PATCH', '/tenant/settings', p.tenant, { alertChannels: { webhook: { url: receiver.url(`/other/${p.tenantId}`) } } }),
  },
  'POST /tenant/settings/webhook/secret': {
    needs: ['alert'],
    call: (p) => json('POST', '/tenant/settings/webhook/secret', p.tenant),
  },
  'POST /tenant/alerts': {
    needs: ['tenant'],
    call: (p) => json('POST', '/tenant/alerts', p.tenant, { nome: 'New', channels: { webhook: false }, content: [] }),
  },
  'PATCH /tenant/alerts/{id}': {
    needs: ['alert'],
    call: (p) => json('PATCH', `/tenant/alerts/${p.alertId}`, p.tenant, { nome: 'Renamed' }),
  },
  'DELETE /tenant/alerts/{id}': { needs: ['alert'], call: (p) => json('DELETE', `/tenant/alerts/${p.alertId}`, p.tenant) },
  'POST /tenant/alerts/{id}/send': {
    needs: ['alert'],
    call: (p) => json('POST', `/tenant/alerts/${p.alertId}/send`, p.tenant, { user: { id: 1 } }),
    check: async (p) => expectOneDeliveryQueued(p),
  },
  'POST /tenant/alerts/{id}/fire': {
    needs: ['alert'],
    call: (p) => json('POST', `/tenant/alerts/${p.alertId}/fire`, p.tenant, { user: { id: 1 } }),
    check: async (p) => expectOneDeliveryQueued(p),
  },
  'POST /tenant/deliveries/{id}/redeliver': {
    needs: ['failedDelivery'],
    call: (p) => json('POST', `/tenant/deliveries/${p.deliveryId}/redeliver`, p.tenant),
  },
  'PATCH /tenants/settings': {
    needs: ['events'],
    call: (p) => json('PATCH', '/tenants/settings', p.client, { webhook: { url: receiver.url(`/moved/${p.clientId}`) } }),
  },
  'POST /tenants/settings/webhook/secret': {
    needs: ['events'],
    call: (p) => json('POST', '/tenants/settings/webhook/secret', p.client),
  },
  'POST /tenants/deliveries/{id}/redeliver': {
    needs: ['events', 'run', 'failedEvent'],
    call: (p) => json('POST', `/tenants/deliveries/${p.eventDeliveryId}/redeliver`, p.client),
  },
  'POST /tenant/login/revoke': {
    needs: ['users'],
    call: (p) => json('POST', '/tenant/login/revoke', p.tenant, { login: p.login }),
  },
  'GET /auth/api/{token}': {
    needs: ['login'],
    call: (p) => ({ method: 'GET', path: `/auth/api/${p.loginToken}`, headers: { host: p.dominio } }),
    // Every landing opens a session of its own: a browser's retry is a second sign-in.
    repeatable: ['SESSION#H/SESSION'],
  },
  'POST /agent/heartbeat': { needs: ['agent'], call: (p) => ({ method: 'POST', path: '/agent/heartbeat', token: p.agent }) },
  'POST /agent/runs/{id}': {
    // A failure, to a client with an events webhook: the report commits the `run.failed` event with it.
    needs: ['run', 'events'],
    call: (p) => json('POST', `/agent/runs/${p.runId}`, p.agent, { status: 'failed', message: 'erp down' }),
    check: async (p) => {
      const events = (await ok({ method: 'GET', path: '/tenants/deliveries', token: p.client })).body.data;
      expect(events.map((event: { type: string }) => event.type)).toEqual(['run.failed']);
    },
  },
  'worker reload-worker': {
    needs: ['agent'],
    event: (p) => sqsEvent([loadMessage(p, p.flowIds[0] as number, `batch-${p.tenantId}`)], 'g'),
    work: (_p, event, timeoutMs) => invokeWorker('reload-worker', event, timeoutMs),
  },
  'worker webhook-deliverer': {
    needs: ['delivery'],
    event: (p) => sqsEvent([{ tenantId: p.tenantId, deliveryId: p.deliveryId }]),
    work: (_p, event, timeoutMs) => invokeWorker('webhook-deliverer', event, timeoutMs),
    check: async (p) => {
      const delivery = (await ok({ method: 'GET', path: `/tenant/deliveries/${p.deliveryId}`, token: p.tenant })).body.data;
      expect(delivery.status).toBe('delivered');
    },
  },
  'worker schedule-fire-worker': {
    needs: ['schedule', 'agent'],
    event: fireEvent,
    work: (_p, event, timeoutMs) => invokeWorker('schedule-fire-worker', event, timeoutMs),
  },
  'worker rollout-worker': {
    needs: ['agent', 'rollout'],
    event: (p) => sqsEvent([{ clientId: p.clientId, rolloutId: p.rolloutId }]),
    // The faulted attempt gets a few seconds (the 1 ms of a stopped route would leave it no time for a tenant); the
    // queue hands the message out again once the worker that had it is gone (its visibility, 360 s, outlasts the
    // worker's lease, and the tenant's apply lock, both held until that worker's deadline): the retry waits for them.
    work: async (p, event, timeoutMs) => {
      const leaseLeft = ((await findRollout(p.rolloutId))?.leaseUntil ?? 0) - Date.now();
      if (leaseLeft > 0) await new Promise((resolve) => setTimeout(resolve, leaseLeft + 10));
      return invokeWorker('rollout-worker', event, Math.max(timeoutMs, faultedWorkerMs));
    },
    check: async (p) => {
      const path = `/tenants/templates/${p.templateId}/rollouts/${p.rolloutId}`;
      const rollout = (await ok({ method: 'GET', path, token: p.client })).body.data;
      expect(rollout).toMatchObject({ state: 'finished', counts: { applied: 1, pending: 0 } });
      const own = (await ok({ method: 'GET', path: '/tenant', token: p.tenant })).body.data;
      expect(own.template).toMatchObject({ id: p.templateId, version: 2 });
    },
  },
  'worker follow-up-sweeper': {
    needs: ['pendingProvision'],
    work: (p, _event, timeoutMs) => finishFollowUp(p.followUp, Date.now() + timeoutMs),
    check: async (p) => {
      const own = (await ok({ method: 'GET', path: '/tenant', token: p.tenant })).body.data;
      expect(own).toMatchObject({ pendingTemplateId: null, template: { id: p.templateId } });
    },
  },
};

/**
 * What a timed function does is covered elsewhere when it cannot run here: the dispatcher's tick
 * lists every tenant's due schedules at once, so beside the other test files' schedules it would not
 * be deterministic; test/integration/schedule-dispatcher.test.ts stops it part-way and re-runs it.
 */
const coveredElsewhere: Record<string, string> = {
  'worker schedule-dispatcher': 'test/integration/schedule-dispatcher.test.ts',
};

async function expectOneDeliveryQueued(party: Party): Promise<void> {
  const deliveries = (await ok({ method: 'GET', path: `/tenant/alerts/${party.alertId}/deliveries`, token: party.tenant })).body
    .data;
  expect(deliveries).toHaveLength(1);
}

/**
 * Entities no clean run here writes, and why: each is written by what the other test names. (A
 * `legacy` entity is written by no release, only read.)
 */
const entitiesWrittenElsewhere: Record<string, string> = {
  dispatchCursor: "the dispatcher's tick, stopped part-way: test/integration/schedule-dispatcher.test.ts",
  dispatchShards: "the dispatcher's tick: test/integration/schedule-dispatcher.test.ts",
  migrationState: 'the migration runner, at deploy and when the twin starts: test/integration/migration-runner.test.ts',
  webhookEndpoint: "a delivery's attempt that stalls (times out or fails to connect): test/integration/webhook-endpoint.test.ts",
  clientWebhookEndpoint:
    "an event delivery's attempt that stalls: the code of a tenant's (test/integration/webhook-endpoint.test.ts), with the client's keys",
  clientWebhookSlot:
    "an event delivery's attempt: test/e2e/client-events.test.ts (the code of a tenant's, whose worker case is here)",
};

/** The declared entity of each item the case wrote; an item of none fails the case, named. */
function entitiesOf(trace: Trace, label: string): Set<string> {
  const written = [...trace.keys.values()].map((key) => {
    const found = declaredEntityOf(key);
    if (!found)
      throw new Error(`${label}: the item ${key.pk} / ${key.sk} is of no declared entity (store/entity-declarations.ts)`);
    return found.name;
  });
  return new Set(written);
}

/** One item as the comparison sees it: its entity and kind (ids and hashes masked) and the attributes that say its state. */
function shape(item: Record<string, unknown>, now: number): string {
  const mask = (value: unknown) =>
    String(value)
      .replace(/[0-9a-f]{16,}/g, 'H')
      .replace(/\d+/g, 'N');
  const kept: Record<string, unknown> = {
    entity: declaredEntityOf(item as { pk: string; sk: string })?.name,
    key: `${mask(item.pk)}/${mask(item.sk)}`,
  };
  for (const name of ['state', 'status', 'ativo', 'isDefault', 'kind', 'latestVersion', 'version', 'allowed', 'nome', 'login']) {
    if (name in item) kept[name] = item[name];
  }
  for (const name of ['deletedAt', 'pendingTemplate', 'appliedTemplate', 'revokedBefore', 'gsi1pk', 'response', 'progress']) {
    kept[`has ${name}`] = name in item;
  }
  if (isAuditRecord(item as { pk: string; sk: string })) kept.action = item.action;
  if ('attempts' in item) kept.attempts = (item.attempts as unknown[]).length;
  if ('lockedUntil' in item) kept.locked = Number(item.lockedUntil) > now;
  if ('claimedUntil' in item) kept.claimed = Number(item.claimedUntil) > now;
  return JSON.stringify(kept);
}

/** Everything the case wrote, as it is now: a sorted list of shapes, repeatable kinds counted once. */
async function state(trace: Trace, repeatable: readonly string[] = []): Promise<string[]> {
  const items = await getAll<Record<string, unknown>>([...trace.keys.values()]);
  const now = Date.now();
  const shapes = items.map((item) => shape(item, now));
  const once = shapes.filter((entry) => repeatable.some((kind) => entry.includes(`"key":"${kind}"`)));
  return [...shapes.filter((entry) => !once.includes(entry)), ...new Set(once)].sort();
}

/** An answer without what differs between parties and attempts (ids, tokens, times, request ids). */
function normalizeAnswer(value: unknown, key = ''): unknown {
  if (Array.isArray(value)) return value.map((entry) => normalizeAnswer(entry));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([name, entry]) => [name, normalizeAnswer(entry, name)]));
  }
  if (typeof value === 'number' && /(^id$|Id$)/.test(key)) return 'ID';
  if (typeof value === 'string') {
    // A batch id is made of the request's Idempotency-Key, which each case picks anew.
    if (key === 'requestId' || key === 'token' || key === 'webhookId' || key === 'batchId') return key.toUpperCase();
    return value.replace(/\d{4}-\d{2}-\d{2}T[\d:.]+Z/g, 'TIME').replace(/-\d+\./g, '-N.');
  }
  return value;
}

/** The follow-ups the case's tenants (and client, for a template, an event or a rollout) left, finished as the sweeper would (it runs later; here, at once). */
async function sweepCase(trace: Trace): Promise<void> {
  const idsOf = (kind: 'TENANT' | 'CLIENT') =>
    new Set([...trace.keys.values()].flatMap(({ pk, sk }) => (sk === kind ? [Number(pk.slice(kind.length + 1))] : [])));
  const tenantIds = idsOf('TENANT');
  const clientIds = idsOf('CLIENT');
  const ours = (followUp: FollowUp) =>
    followUp.kind === 'sweep-template' || followUp.kind === 'enqueue-event' || followUp.kind === 'queue-rollout'
      ? clientIds.has(followUp.ownerId)
      : tenantIds.has(followUp.ownerId);
  for (let shard = 0; shard < followUpShards; shard++) {
    let cursor: string | undefined;
    do {
      const page = await listFollowUps(shard, 100, cursor);
      for (const followUp of page.items) {
        if (ours(followUp)) await finishFollowUp(followUp, Date.now() + 60_000);
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }
}

interface Outcome {
  answer: Answer | undefined;
  state: string[];
  writes: number;
  /** The audit records the first attempt wrote. */
  recorded: AuditRecord[];
  /** The entities of the items the case wrote, the party's included. */
  entities: Set<string>;
}

/** The deadline a stopped attempt had: its locks and claims are free soon after, as a timed-out function's are. */
const stoppedTimeoutMs = 1;
const failedTimeoutMs = 50;

/** One case: a party, the scenario's request (under `plan` if any), the retry, the sweeper; then its state. */
async function runCase(scenario: Scenario, plan?: { mode: FaultMode; at: number }): Promise<Outcome> {
  const trace = newTrace();
  return traced(trace, async () => {
    const party = await buildParty(scenario.needs);
    const key = randomUUID();
    const event = await scenario.event?.(party);
    const attempt = (timeoutMs?: number) => {
      if (scenario.call) {
        const call = scenario.call(party);
        return callRoute({ ...call, headers: { ...call.headers, 'idempotency-key': key } }, timeoutMs);
      }
      return (scenario.work as NonNullable<Scenario['work']>)(party, event, timeoutMs ?? 30_000).then(() => undefined);
    };
    // The first attempt counts its writes, and is faulted when there is a plan.
    const first = invocationTrace(trace, plan ?? { mode: 'fail', at: Number.POSITIVE_INFINITY });
    const writtenBefore = new Set(trace.keys.keys());
    const timeoutMs = plan?.mode === 'kill' ? stoppedTimeoutMs : plan ? failedTimeoutMs : undefined;
    let answer = await traced(first, () => attempt(timeoutMs)).catch(() => undefined);
    const recorded = (
      await getAll<Record<string, unknown>>(
        [...trace.keys].flatMap(([id, key]) => (writtenBefore.has(id) || !isAuditRecord(key) ? [] : [key])),
      )
    ).map(auditRecordOf);
    if (plan) {
      await new Promise((resolve) => setTimeout(resolve, failedTimeoutMs + 10));
      answer = await traced(invocationTrace(trace), () => attempt());
    }
    await sweepCase(trace);
    const label = plan ? `${plan.mode} at write ${plan.at}` : 'clean run';
    await Promise.resolve(scenario.check?.(party, answer, trace)).catch((error: Error) => {
      throw new Error(`${label}: ${error.message}`);
    });
    const written = entitiesOf(trace, label);
    // A retry of a request without its Idempotency-Key honoured is a second request: its change, if it
    // makes one again, is recorded again (an idempotent request's, once whichever attempt commits it).
    const repeatable = [...(scenario.repeatable ?? []), ...(idempotentRoute(scenario) ? [] : auditRecordKinds)];
    return { answer, state: await state(trace, repeatable), writes: first.writes, recorded, entities: written };
  });
}

const auditRecordKinds = ['AUDIT#T#N/RECORD#N', 'AUDIT#C#N/RECORD#N', 'AUDIT#A#N#N/RECORD#N'];
const isAuditRecord = (key: { pk: string; sk: string }) =>
  ['auditRecord', 'agentAuditRecord'].includes(declaredEntityOf(key)?.name ?? '');
const routeNamed = (name: string) => routes.find((route) => routeKey(route) === name);
const idempotentRoute = (scenario: Scenario) => {
  const [name = ''] = Object.entries(scenarios).find(([, each]) => each === scenario) ?? [];
  return Boolean(routeNamed(name)?.idempotent);
};

const writers = [
  ...routes.filter((route) => route.table === 'readWrite').map((route) => routeKey(route)),
  ...queueConsumers.filter((consumer) => consumer.table === 'readWrite').map((consumer) => `worker ${consumer.handler}`),
  ...timedFunctions.filter((timed) => timed.table === 'readWrite').map((timed) => `worker ${timed.handler}`),
];

test('every writing route and worker of the route table has a fault scenario (or names the test that covers it)', () => {
  const missing = writers.filter((name) => !(name in scenarios) && !(name in coveredElsewhere));
  expect(missing).toEqual([]);
  expect(Object.keys(scenarios).filter((name) => !writers.includes(name))).toEqual([]);
});

const coverage: string[] = [];
/** The entities the clean runs wrote: by the end, every declared one that is written at all. */
const writtenByCleanRuns = new Set<string>();

describe.each(Object.keys(scenarios))('%s', (name) => {
  const scenario = scenarios[name] as Scenario;
  test('a stop or a store failure after any write, then the retry: same answer, same state as a clean run', async () => {
    const clean = await runCase(scenario);
    expect(clean.answer?.status ?? 200).toBeLessThan(400);
    expect(clean.writes).toBeGreaterThan(0);
    for (const name of clean.entities) writtenByCleanRuns.add(name);
    // One audit record per change, as the route's row says (audit/): its action, resource and chain.
    const fact = routeNamed(name)?.audit;
    const audited = scenario.call !== undefined && fact !== undefined && 'resource' in fact;
    expect(
      clean.recorded.map((record) => ({
        action: record.action,
        resource: record.resource.type,
        verifies: recordHash(record) === record.hash,
      })),
      'the audit records of the clean run',
    ).toEqual(audited ? [{ action: name, resource: fact.resource, verifies: true }] : []);
    const plans = (['kill', 'fail'] as const).flatMap((mode) =>
      Array.from({ length: clean.writes }, (_, index) => ({ mode, at: index + 1 })),
    );
    const outcomes = await inParallel(plans.map((plan) => () => runCase(scenario, plan)));
    coverage.push(`${name}: ${clean.writes} writes, crash points 1–${clean.writes} × stop and fail`);
    outcomes.forEach((outcome, index) => {
      const plan = plans[index];
      const label = `${plan?.mode} at write ${plan?.at}`;
      expect(outcome.answer?.status ?? 200, label).toBeLessThan(500);
      if (scenario.call && routes.find((route) => routeKey(route) === name)?.idempotent) {
        expect({ status: outcome.answer?.status, body: normalizeAnswer(outcome.answer?.body) }, label).toEqual({
          status: clean.answer?.status,
          body: normalizeAnswer(clean.answer?.body),
        });
      }
      expect(outcome.state, label).toEqual(clean.state);
    });
  }, 120_000);
});

// After every case (a file's tests run in order); a run filtered to some cases (`-t`) leaves it out.
test('every declared entity is written by some clean run, unless legacy or written elsewhere (named)', () => {
  const declared: readonly DeclaredEntity[] = Object.values(entities);
  expect(Object.keys(entitiesWrittenElsewhere).filter((name) => !(name in entities))).toEqual([]);
  const expected = declared.filter(({ name, declaration }) => !declaration.legacy && !(name in entitiesWrittenElsewhere));
  expect(
    expected.filter(({ name }) => !writtenByCleanRuns.has(name)).map(({ name }) => name),
    'declared entities no clean run wrote',
  ).toEqual([]);
  expect(
    declared.filter(({ name }) => name in entitiesWrittenElsewhere && writtenByCleanRuns.has(name)).map(({ name }) => name),
    'entities said to be written elsewhere that a clean run here writes',
  ).toEqual([]);
});

afterAll(() => {
  // The closing note lists what was covered; the run prints it.
  console.log(`fault injection:\n${coverage.sort().join('\n')}`);
});
