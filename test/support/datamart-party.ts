/**
 * A tenant with the retail template, a user in a group, and a datamart of all its tables owned by
 * the user, with the user's permission records on each: what the follow-up and migration suites
 * delete, sweep and reshape.
 */
import { api, getOk, newClient, newTenant } from './api.ts';
import { tablePermission } from './permissions.ts';
import { publish, retailBundle } from './templates.ts';

export type DatamartParty = Awaited<ReturnType<typeof populatedDatamart>>;

export async function populatedDatamart() {
  const client = await newClient();
  const templateId = await publish(client.token, retailBundle());
  const tenant = await newTenant(client.token, { templateId });
  const token = tenant.token;
  const own = (await api('GET', '/tenant', { token })).body.data;
  const tables: number[] = own.desks.flatMap((desk: { tables: Array<{ id: number }> }) => desk.tables.map((table) => table.id));
  const user = (await api('POST', '/tenant/users', { token, body: { login: 'ana@x.io', nome: 'Ana' } })).body.data.id;
  const group = (await api('POST', '/tenant/groups', { token, body: { nome: 'Sales' } })).body.data.id;
  await api('PUT', `/tenant/groups/${group}/members/${user}`, { token });
  const datamart = (await api('POST', '/tenant/datamart', { token, body: { nome: 'DM', tables, owners: [user] } })).body.data.id;
  const permissions = tables.map((tableId) => tablePermission(tableId));
  await api('PUT', `/tenant/datamart/${datamart}/user/${user}`, { token, body: { permissions } });
  return { client, tenant, token, tables, user, group, datamart };
}

/** What every read route shows of the party's datamart, users and permissions. */
export async function readDatamartParty({ token, datamart, user }: DatamartParty) {
  const data = async (path: string) => (await getOk(path, token)).body.data;
  return {
    datamarts: await data('/tenant/datamart'),
    datamart: await data(`/tenant/datamart/${datamart}`),
    userRecords: await data(`/tenant/datamart/${datamart}/user`),
    groupRecords: await data(`/tenant/datamart/${datamart}/group`),
    users: await data('/tenant/users'),
    user: await data(`/tenant/users/${user}`),
    effective: await data(`/tenant/datamart/${datamart}/user/${user}/effective`),
  };
}
