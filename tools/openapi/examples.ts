/**
 * One example per request schema (and the webhook payload), shown in the API description;
 * test/unit/openapi.test.ts validates each against its schema.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

/** An example file of the repository (the tests run them). */
const fromFile = (path: string) => parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')) as unknown;

const block = { type: 'text', nome: 'Intro', generated: { text: 'Sales are up 12%' } };

export const examples: Record<string, unknown> = {
  'alert-delivery': { user: { id: 7, email: 'ana@acme.com' }, content: [block] },
  'alert-webhook': {
    alert: { nome: 'Daily sales', id: 1 },
    user: { id: 7, email: 'ana@acme.com' },
    content: [block, { type: 'report', nome: 'Report', generated: { pdf: 'https://files.example.com/daily.pdf' } }],
    timestamp: '2026-11-22T10:00:00.000Z',
  },
  'apply-template': { templateId: 1 },
  'create-agent': { nome: 'warehouse' },
  'create-alert': { nome: 'Daily sales', channels: { webhook: true }, content: [block] },
  'create-datamart': { nome: 'Vendas', tables: [1, 2], owners: [1] },
  'create-group': { nome: 'Sales' },
  'create-tenant': { nome: 'Acme', ativo: true, development_variables: { DB_HOST: 'db.acme.local' } },
  'create-user': { login: 'ana@acme.com', nome: 'Ana', email: 'ana@acme.com' },
  'delete-tenant': { id: 1 },
  login: { login: 'ana@acme.com', showMenu: 0, route: '/apps/sales' },
  reload: { items: [{ flowId: 1, tokenId: 1, context: 'full' }] },
  'report-run': { status: 'failed', message: 'Connection refused by erp:5432' },
  'revoke-login': { login: 'ana@acme.com' },
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
  'update-settings': { alertChannels: { webhook: { url: 'https://hooks.example.com/k3y-9f2c71' } } },
  'update-tenant': { nome: 'Acme Ltda', development_variables: { DB_HOST: 'db.acme.local' }, schedulingGranularity: 'minutes' },
  'update-user': { nome: 'Ana Souza', email: null },
};
