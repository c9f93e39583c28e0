/**
 * Compile-time checks of the typed client (`tsc`, in `npm run lint`): the calls below are wrong on
 * purpose, and each `@ts-expect-error` fails the build if the client ever accepts it.
 */
import { agentClient, integratorClient, must, tenantClient } from '../../client/src/index.ts';

const integrator = integratorClient('cli_x', { baseUrl: 'http://localhost:3000' });
const tenant = tenantClient('ten_x', { baseUrl: 'http://localhost:3000' });
const agent = agentClient('agt_x', { baseUrl: 'http://localhost:3000' });

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

  const created = await must(integrator.POST('/tenants', { body: { nome: 'Acme', ativo: true } }));
  const token: string = created.data.token;
  // @ts-expect-error the answer has no such field
  void created.data.tokn;
  const own = await must(tenant.GET('/tenant'));
  const flows: number[] = own.data.flows.map((flow) => flow.id);
  return { token, flows };
}
