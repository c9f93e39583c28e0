/**
 * `npm run docs`: writes docs/openapi.json, the OpenAPI 3.1 description of the API, from the route
 * table and the JSON Schemas (functions/core/api/openapi-document.ts builds it). The output is
 * committed and served by GET /openapi.json; test/unit/openapi.test.ts fails when it is stale.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { openApiDocument } from '../functions/core/api/openapi-document.ts';
import { type Route, routes } from '../functions/routes.ts';
import datamart from '../schemas/responses/datamart.schema.json' with { type: 'json' };
import groupPermission from '../schemas/responses/group-permission.schema.json' with { type: 'json' };
import userPermission from '../schemas/responses/user-permission.schema.json' with { type: 'json' };
import { requestSchemas } from '../schemas/index.ts';

export const openApiFile = fileURLToPath(new URL('../docs/openapi.json', import.meta.url));

const text = (path: string) => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');

/** An example file of the repository (the tests run them). */
const fromFile = (path: string) => parse(text(path)) as unknown;

const block = { type: 'text', nome: 'Intro', generated: { text: 'Sales are up 12%' } };

/** One example per request schema (test/unit/openapi.test.ts validates each against its schema). */
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
  'set-scheduling-granularity': { schedulingGranularity: 'minutes' },
  'template-bundle': fromFile('examples/templates/retail.yaml'),
  'update-alert': { channels: { webhook: false } },
  'update-datamart': { nome: 'Vendas e estoque', tables: [1, 2, 3] },
  'update-settings': { alertChannels: { webhook: { url: 'https://hooks.example.com/k3y-9f2c71' } } },
  'update-user': { nome: 'Ana Souza', email: null },
};

/** The document as committed: 2-space JSON, keys in the order the builder writes them, a final newline. */
export function generateOpenApiJson(describedRoutes: readonly Route[] = routes): string {
  const document = openApiDocument({
    routes: describedRoutes,
    requestSchemas,
    responseSchemas: { datamart, 'group-permission': groupPermission, 'user-permission': userPermission },
    examples,
    version: (JSON.parse(text('package.json')) as { version: string }).version,
  });
  return `${JSON.stringify(document, null, 2)}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(openApiFile, generateOpenApiJson());
  console.log(`wrote ${openApiFile}`);
}
