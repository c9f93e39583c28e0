/**
 * One example per request schema (and the webhook payloads: an alert, and each type of event),
 * shown in the API description; test/unit/openapi.test.ts validates each against its schema.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** An example file of the repository (the tests run them). */
const fromFile = (path: string) => parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')) as unknown;

const block = { type: 'text', nome: 'Intro', generated: { text: 'Sales are up 12%' } };

const counts = { pending: 40, applied: 9, unchanged: 0, pending_activation: 1, failed: 0 };
const timestamp = '2026-11-22T10:00:00.000Z';

/** One body of each event type a client's webhook receives (schemas/client-event.schema.json). */
export const clientEventExamples: Record<string, unknown> = {
  'rollout.wave_finished': {
    type: 'rollout.wave_finished',
    timestamp,
    data: { templateId: 1, rolloutId: 3, version: 2, wave: 1, waves: 5, counts },
  },
  'rollout.finished': {
    type: 'rollout.finished',
    timestamp,
    data: { templateId: 1, rolloutId: 3, version: 2, state: 'finished', counts: { ...counts, pending: 0, applied: 48 } },
  },
  'rollout.paused': {
    type: 'rollout.paused',
    timestamp,
    data: { templateId: 1, rolloutId: 3, version: 2, reason: 'failure_budget', counts: { ...counts, failed: 3 } },
  },
  'tenant.apply_failed': {
    type: 'tenant.apply_failed',
    timestamp,
    data: {
      tenantId: 42,
      templateId: 1,
      version: 2,
      rolloutId: 3,
      error: { code: 'apply_in_progress', message: 'Another apply of this tenant is in progress' },
    },
  },
  'run.failed': {
    type: 'run.failed',
    timestamp,
    data: {
      tenantId: 42,
      runId: 118,
      agentId: 1,
      flowId: 7,
      batchId: 'schedule-42-3-29397360',
      context: 'full',
      message: 'Connection refused by erp:5432',
    },
  },
  'schedule.missed': {
    type: 'schedule.missed',
    timestamp,
    data: {
      tenantId: 42,
      scheduleId: 3,
      reason: 'tenant_inactive',
      slot: '2026-11-22T10:00:00Z',
      firedSlot: null,
      nextFireAt: '2026-11-23T10:00:00Z',
    },
  },
  'webhook.endpoint_disabled': {
    type: 'webhook.endpoint_disabled',
    timestamp,
    data: {
      tenantId: 42,
      reason: 'gone',
      message: 'The receiver answered 410 Gone at 2026-11-22T09:59:58.120Z',
      disabledAt: '2026-11-22T10:00:00.000Z',
    },
  },
};

export const examples: Record<string, unknown> = {
  'alert-delivery': { user: { id: 7, email: 'ana@acme.com' }, content: [block] },
  'alert-webhook': {
    alert: { nome: 'Daily sales', id: 1 },
    user: { id: 7, email: 'ana@acme.com' },
    content: [block, { type: 'report', nome: 'Report', generated: { pdf: 'https://files.example.com/daily.pdf' } }],
    timestamp: '2026-11-22T10:00:00.000Z',
  },
  'apply-template': { templateId: 1 },
  'client-event': clientEventExamples['run.failed'],
  'create-agent': { nome: 'warehouse' },
  'create-alert': { nome: 'Daily sales', channels: { webhook: true }, content: [block] },
  'create-datamart': { nome: 'Vendas', tables: [1, 2], owners: [1] },
  'create-group': { nome: 'Sales' },
  'create-rollout': { tenants: 'all', version: 2, waveSize: 50, pauseSeconds: 600, failureBudget: 5, reload: true },
  'create-tenant': { nome: 'Acme', ativo: true, development_variables: { DB_HOST: 'db.acme.local' } },
  'create-user': { login: 'ana@acme.com', nome: 'Ana', email: 'ana@acme.com' },
  'delete-tenant': { id: 1 },
  login: { login: 'ana@acme.com', showMenu: 0, route: '/apps/sales' },
  reload: { items: [{ flowId: 1, tokenId: 1, context: 'full' }] },
  'report-run': { status: 'failed', message: 'Connection refused by erp:5432' },
  'revoke-login': { login: 'ana@acme.com' },
  'rotate-token': { previousValidForSeconds: 3600 },
  'schedule.v2': fromFile('examples/schedules/nightly.yaml'),
  'set-default-template': { templateId: 1 },
  'set-permissions': {
    permissions: [
      {
        tableId: 1,
        allowed: true,
        allow_export: false,
        expires_in: '2030-01-01T00:00:00Z',
        hidden_columns: ['total'],
        filters: [{ column: 'order_id', operator: '>=', value: '1000' }],
      },
    ],
  },
  'template-bundle': fromFile('examples/templates/retail.yaml'),
  'update-alert': { channels: { webhook: false } },
  'update-datamart': { nome: 'Vendas e estoque', tables: [1, 2, 3] },
  'update-client-settings': { webhook: { url: 'https://hooks.example.com/events-7c1d0e' } },
  'update-settings': { alertChannels: { webhook: { url: 'https://hooks.example.com/k3y-9f2c71' } } },
  'update-tenant': { nome: 'Acme Ltda', development_variables: { DB_HOST: 'db.acme.local' }, schedulingGranularity: 'minutes' },
  'update-user': { nome: 'Ana Souza', email: null },
};
