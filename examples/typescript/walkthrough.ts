/**
 * The README's walkthroughs with the typed client (client/): publish a template, create a tenant
 * with it (with an Idempotency-Key), apply it, reload the plan, add a user and log them in, and
 * walk the client's tenants page by page. Every path, body and answer below is typed from
 * docs/openapi.json: a misspelled field does not compile.
 *
 *   npx tsx examples/typescript/walkthrough.ts http://localhost:3000 <client token>
 */
import {
  agentClient,
  each,
  integratorClient,
  must,
  newIdempotencyKey,
  ServiceError,
  tenantClient,
} from '../../client/src/index.ts';

const [baseUrl = 'http://localhost:3000', clientToken = process.env.CLIENT_TOKEN ?? ''] = process.argv.slice(2);
const integrator = integratorClient(clientToken, { baseUrl });

// A client's template names are unique: this walkthrough makes a new one each time it runs.
const template = await must(
  integrator.POST('/tenants/templates', {
    body: {
      nome: `Typed walkthrough ${newIdempotencyKey().slice(0, 8)}`,
      desks: [{ key: 'sales', nome: 'Sales' }],
      tables: [
        { key: 'orders', nome: 'Orders', desk: 'sales', columns: [{ column_name: 'id', data_type: 'integer', label: 'Id' }] },
      ],
      connections: [{ key: 'erp', nome: 'ERP', kind: 'postgres' }],
      flows: [{ key: 'load-orders', nome: 'Load orders', connection: 'erp', writes: ['orders'], context: 'full' }],
    },
  }),
);

const created = await must(
  integrator.POST('/tenants', {
    params: { header: { 'Idempotency-Key': newIdempotencyKey() } },
    body: { nome: 'Typed', ativo: true, templateId: template.data.id },
  }),
);
const tenant = tenantClient(created.data.token, { baseUrl });

// The plan of the tables the creation's apply made, ready for the reload endpoint.
const applied = await must(tenant.POST('/tenant/templates/apply', { body: { templateId: template.data.id } }));
const agentToken = (await must(tenant.POST('/tenant/agents/{id}/token', { params: { path: { id: 1 } } }))).data.token;
await must(agentClient(agentToken, { baseUrl }).POST('/agent/heartbeat'));
const reload = await must(tenant.POST('/tenant/templates/reload', { body: { items: applied.reloadPlan } }));

await must(tenant.POST('/tenant/users', { body: { login: 'ana@typed.example', nome: 'Ana' } }));
const login = await must(tenant.POST('/tenant/login', { body: { login: 'ana@typed.example', showMenu: 0 } }));

let tenants = 0;
for await (const listed of each((cursor) => must(integrator.GET('/tenants', { params: { query: { cursor, limit: 100 } } })))) {
  if (listed.id === created.data.id) tenants++;
}

let refused = '';
try {
  await must(tenant.GET('/tenant/users/{id}', { params: { path: { id: 999_999 } } }));
} catch (error) {
  if (error instanceof ServiceError) refused = `${error.status} ${error.code}`;
}

console.log(
  JSON.stringify({
    tenant: created.data.id,
    plan: applied.reloadPlan.map((item) => item.flowId),
    reload: reload.results.map((result) => result.status),
    loginUrl: login.url,
    listedOnce: tenants === 1,
    refused,
  }),
);
