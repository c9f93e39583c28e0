/**
 * Migration 5 (functions/core/migrations/counts-kept.ts), on tenants and clients as earlier versions
 * left them: items without the counts of their quotas, agents without their count and name claims.
 * After the migration every count is what the writes keep (a deleted tenant's too; a client's live
 * tenants only), every read route answers as before, and from then on the quotas hold as they do
 * for data written under them: creations at once stop exactly at the maximum, counting what was
 * there once; a deletion takes one off; a repeated agent name is refused. A migration stopped at
 * any write and run again ends the same.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { allocateAgentId } from '#functions/core/agents/agent-repository.ts';
import { createAlert, deleteAlert } from '#functions/core/alerts/alerts.ts';
import { findAlertCount } from '#functions/core/alerts/alert-repository.ts';
import { hashToken, newToken } from '#functions/core/auth/tokens.ts';
import { findClientCount } from '#functions/core/clients/client-repository.ts';
import { createClient } from '#functions/core/clients/clients.ts';
import { createDatamart, deleteDatamart } from '#functions/core/datamarts/datamarts.ts';
import { findDatamartCount } from '#functions/core/datamarts/datamart-repository.ts';
import {
  deleteGroupMemberships,
  deleteGroupRecord,
  findCount,
  insertGroup,
} from '#functions/core/directory/directory-repository.ts';
import { createUser, deleteUser } from '#functions/core/directory/users.ts';
import { ServiceError } from '#functions/core/errors.ts';
import { countsKept } from '#functions/core/migrations/counts-kept.ts';
import { deleteSchedule, putSchedule } from '#functions/core/schedules/schedules.ts';
import { findScheduleCount } from '#functions/core/schedules/schedule-repository.ts';
import { deleteAll, getItem, putAll, queryAll } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { unrecorded } from '#functions/core/store/resumable.ts';
import {
  allocateTemplateId,
  deleteTemplateRecord,
  findTemplate,
  insertTemplate,
  type TemplateRecord,
} from '#functions/core/templates/template-repository.ts';
import {
  allocateTenantId,
  findTenant,
  insertTenant,
  softDeleteTenant,
  type TenantRecord,
} from '#functions/core/tenants/tenant-repository.ts';
import { api, getOk, newClient, newTenant } from '#test/support/api.ts';
import { installFaultInjection } from '#test/support/faults.ts';
import { migrateWithin, stoppedAfterEachWrite } from '#test/support/migrations.ts';
import { scheduleFile, tenantWithFlows } from '#test/support/schedules.ts';
import { retailBundle } from '#test/support/templates.ts';

installFaultInjection();

const tenantCountNames = ['USERS', 'GROUPS', 'MEMBERSHIPS', 'DATAMARTS', 'ALERTS', 'SCHEDULES'] as const;
const clientCountNames = ['TENANTS', 'TEMPLATES'] as const;

const at = <T>(count: number, make: (index: number) => Promise<T>) =>
  Promise.all(Array.from({ length: count }, (_, index) => make(index)));
const now = () => new Date().toISOString();
/** The record the migration's Scan finds for a tenant, or a client: what its `migrate` is given. */
const tenantRecord = async (tenantId: number) => (await getItem(stored.tenant.key({ tenantId }))) as Record<string, unknown>;
const clientRecord = async (clientId: number) => (await getItem(stored.client.key({ clientId }))) as Record<string, unknown>;

/**
 * A client with a live tenant that has something of every counted kind (two users, two groups,
 * three memberships, a datamart, an alert, an agent besides the default one and, `withSchedule`,
 * a schedule, which needs the retail template's flows), and a tenant deleted with a user in a group.
 */
async function party(withSchedule: boolean) {
  const { client, tenant, flows } = withSchedule
    ? await tenantWithFlows()
    : await newClient().then(async (made) => ({
        client: made,
        tenant: await newTenant(made.token),
        flows: {} as Record<string, number>,
      }));
  const write = async (token: string, method: string, path: string, body?: unknown) => {
    const answer = await api(method, path, { token, body });
    expect(answer.status, `${method} ${path}`).toBeLessThan(300);
    return answer.body.data?.id as number;
  };
  const token = tenant.token;
  const users = [
    await write(token, 'POST', '/tenant/users', { login: 'ana@x.io', nome: 'Ana' }),
    await write(token, 'POST', '/tenant/users', { login: 'bia@x.io', nome: 'Bia' }),
  ];
  const groups = [
    await write(token, 'POST', '/tenant/groups', { nome: 'Sales' }),
    await write(token, 'POST', '/tenant/groups', { nome: 'Ops' }),
  ];
  for (const [group, user] of [
    [groups[0], users[0]],
    [groups[0], users[1]],
    [groups[1], users[0]],
  ]) {
    await write(token, 'PUT', `/tenant/groups/${group}/members/${user}`);
  }
  await write(token, 'POST', '/tenant/datamart', { nome: 'DM', tables: [], owners: [users[0]] });
  await write(token, 'POST', '/tenant/alerts', { nome: 'Alert', channels: { webhook: false }, content: [] });
  if (withSchedule) await write(token, 'PUT', '/tenant/schedules/1', scheduleFile(1, [flows['load-orders'] as number]));
  await write(token, 'POST', '/tenant/agents', { nome: 'warehouse' });

  const gone = await newTenant(client.token, { nome: 'Gone' });
  const goneUser = await write(gone.token, 'POST', '/tenant/users', { login: 'cid@x.io', nome: 'Cid' });
  const goneGroup = await write(gone.token, 'POST', '/tenant/groups', { nome: 'Gone' });
  await write(gone.token, 'PUT', `/tenant/groups/${goneGroup}/members/${goneUser}`);
  await write(client.token, 'DELETE', '/tenants', { id: gone.id });
  return { client, tenant, gone: { ...gone, group: goneGroup } };
}

type Party = Awaited<ReturnType<typeof party>>;

const agentClaims = (tenantId: number) =>
  queryAll<{ sk: string; agentId: number }>(stored.agentName.partition({ tenantId }), stored.agentName.keyPrefix({}));

/** The keys of every count and agent name claim of the party: what an earlier version did not keep. */
async function countKeys({ client, tenant, gone }: Party) {
  const ofTenant = async (tenantId: number) => [
    ...tenantCountNames.map((name) => stored.tenantCount.key({ tenantId, name })),
    stored.agentCount.key({ tenantId }),
    ...(await agentClaims(tenantId)).map(({ sk }) => ({ pk: stored.agentName.partition({ tenantId }), sk })),
  ];
  return [
    ...(await ofTenant(tenant.id)),
    ...(await ofTenant(gone.id)),
    ...clientCountNames.map((name) => stored.clientCount.key({ clientId: client.clientId, name })),
  ];
}

/** Every count of the party (undefined where there is none) and whom each agent name claim names. */
async function countsOf({ client, tenant, gone }: Party) {
  const value = async (key: { pk: string; sk: string }) => (await getItem<{ value: number }>(key))?.value;
  const ofTenant = async (label: string, tenantId: number) => [
    ...(await Promise.all(
      tenantCountNames.map(async (name) => [`${label} ${name}`, await value(stored.tenantCount.key({ tenantId, name }))]),
    )),
    [`${label} AGENTCOUNT`, await value(stored.agentCount.key({ tenantId }))],
    ...(await agentClaims(tenantId)).map(({ sk, agentId }) => [`${label} ${sk}`, agentId]),
  ];
  return Object.fromEntries([
    ...(await ofTenant('tenant', tenant.id)),
    ...(await ofTenant('gone', gone.id)),
    ...(await Promise.all(
      clientCountNames.map(async (name) => [
        `client ${name}`,
        await value(stored.clientCount.key({ clientId: client.clientId, name })),
      ]),
    )),
  ]) as Record<string, number | undefined>;
}

/** What the migration leaves: every count the writes kept, and a count at zero where nothing was ever counted. */
const kept = (counts: Record<string, number | undefined>) =>
  Object.fromEntries(Object.entries(counts).map(([name, value]) => [name, value ?? 0]));

/** Leaves the party as an earlier version did: its items, without a count or an agent name claim. */
async function storeAsEarlierVersion(owner: Party) {
  await deleteAll(await countKeys(owner));
  expect(Object.values(await countsOf(owner)).filter((value) => value !== undefined)).toEqual([]);
}

/** What every read route shows of the party's tenant and client. */
async function readAll({ client, tenant }: Party) {
  const data = async (token: string, path: string) => (await getOk(path, token)).body.data;
  const paths = ['/tenant/users', '/tenant/groups', '/tenant/datamart', '/tenant/alerts', '/tenant/schedules', '/tenant/agents'];
  return {
    tenant: await Promise.all(paths.map((path) => data(tenant.token, path))),
    client: [await data(client.token, '/tenants'), await data(client.token, '/tenants/templates')],
  };
}

/** The migration of the party's records, as the runner would give them to it. */
/** The migration over the party's tenants and client, as its runner hands it what it selects there. */
const migrateParty = ({ client, tenant, gone }: Party) =>
  migrateWithin(countsKept, [
    stored.tenant.partition({ tenantId: tenant.id }),
    stored.tenant.partition({ tenantId: gone.id }),
    stored.client.partition({ clientId: client.clientId }),
  ]);

/** Whether a creation was written: false when the quota refused it (409 `…_limit` or `limit`). */
async function written(creation: Promise<unknown>): Promise<boolean> {
  try {
    const outcome = await creation;
    return outcome !== false && outcome !== 'limit';
  } catch (error) {
    if (error instanceof ServiceError && error.status === 409 && error.code.endsWith('_limit')) return false;
    throw error;
  }
}

/** Items of one kind an earlier version wrote before their count was kept, and what a test does with them after the migration. */
interface Seeded {
  /** The records the migration's Scan finds for them (their tenant's or client's, and any others they need). */
  records: Array<Record<string, unknown>>;
  /** The four items written, by id. */
  ids: number[];
  /** Creates one more (at most `max`), `index` (below 22) telling it apart; whether it was written. */
  create: (index: number, max: number) => Promise<boolean>;
  remove: (id: number) => Promise<unknown>;
  count: () => Promise<number>;
}

/** Ids of items written before the count: far above those the tests' creations take. */
const seededIds = [9_001, 9_002, 9_003, 9_004];
const at2020 = '2020-01-01T00:00:00.000Z';
/** A tenant id of its own: users, groups, datamarts and alerts need no tenant item, nor does its migration. */
const freshTenant = () => 2_000_000_000 + Math.floor(Math.random() * 1_000_000_000);
const bareTenant = (tenantId: number) => ({ ...stored.tenant.key({ tenantId }), tenantId });

/** A tenant of the client, not written yet, and its token. */
async function newTenantRecord(clientId: number): Promise<{ tenant: TenantRecord; token: string }> {
  const tenantId = await allocateTenantId();
  const token = await newToken('tenant', { clientId, tenantId });
  const tenant: TenantRecord = {
    tenantId,
    clientId,
    nome: 'Quota',
    ativo: true,
    dominio: `quota-${tenantId}.localhost`,
    developmentVariables: {},
    tokenHash: hashToken(token),
    createdAt: now(),
    updatedAt: now(),
  };
  return { tenant, token };
}

const kinds: Record<string, () => Promise<Seeded>> = {
  'users of a tenant': async () => {
    const tenantId = freshTenant();
    await putAll(
      seededIds.map((userId) => ({
        ...stored.user.key({ tenantId, userId }),
        userId,
        tenantId,
        login: `seeded-${userId}`,
        nome: 'Seeded',
        createdAt: at2020,
        updatedAt: at2020,
      })),
    );
    return {
      records: [bareTenant(tenantId)],
      ids: seededIds,
      create: (index, max) => written(createUser(tenantId, { login: `user-${index}@quota.io`, nome: 'User' }, unrecorded(), max)),
      remove: (userId) => deleteUser(tenantId, userId),
      count: () => findCount(tenantId, 'USERS'),
    };
  },
  'groups of a tenant': async () => {
    const tenantId = freshTenant();
    const group = (groupId: number) => ({ groupId, tenantId, nome: `G${groupId}`, createdAt: at2020 });
    await putAll(seededIds.map((groupId) => ({ ...stored.group.key({ tenantId, groupId }), ...group(groupId) })));
    return {
      records: [bareTenant(tenantId)],
      ids: seededIds,
      create: (index, max) => written(insertGroup(group(50 + index), [], max)),
      remove: (groupId) => deleteGroupRecord(tenantId, groupId, []),
      count: () => findCount(tenantId, 'GROUPS'),
    };
  },
  'datamarts of a tenant': async () => {
    const tenantId = freshTenant();
    await putAll(
      seededIds.map((datamartId) => ({
        ...stored.datamart.key({ tenantId, datamartId }),
        ...stored.datamart.indexEntry({ tenantId, datamartId }),
        datamartId,
        tenantId,
        nome: 'Seeded',
        tableIds: [],
        ownerIds: [],
        tenantIndexed: true,
        createdAt: at2020,
        updatedAt: at2020,
      })),
    );
    return {
      records: [bareTenant(tenantId)],
      ids: seededIds,
      create: (index, max) => written(createDatamart(tenantId, { nome: `D${index}`, tables: [], owners: [] }, unrecorded(), max)),
      remove: (datamartId) => deleteDatamart(tenantId, datamartId),
      count: () => findDatamartCount(tenantId),
    };
  },
  'alerts of a tenant': async () => {
    const tenantId = freshTenant();
    const alert = { nome: 'Seeded', channels: { webhook: false }, content: [] };
    await putAll(
      seededIds.map((alertId) => ({
        ...stored.alert.key({ tenantId, alertId }),
        ...alert,
        alertId,
        tenantId,
        createdAt: at2020,
        updatedAt: at2020,
      })),
    );
    return {
      records: [bareTenant(tenantId)],
      ids: seededIds,
      create: (_index, max) => written(createAlert(tenantId, alert, unrecorded(), max)),
      remove: (alertId) => deleteAlert(tenantId, alertId),
      count: () => findAlertCount(tenantId),
    };
  },
  'schedules of a tenant': async () => {
    // A schedule needs a live tenant and a flow of its own.
    const { tenant, flows } = await tenantWithFlows();
    const tenantId = tenant.id;
    const flowId = flows['load-orders'] as number;
    await putAll(
      seededIds.map((scheduleId) => ({
        ...stored.schedule.key({ tenantId, scheduleId }),
        tenantId,
        scheduleId,
        file: scheduleFile(scheduleId, []),
        version: 1,
        minuteTriggers: false,
      })),
    );
    return {
      records: [await tenantRecord(tenantId)],
      ids: seededIds,
      // Schedule ids are the caller's: a new one each time.
      create: (index, max) =>
        written(putSchedule(tenantId, 100 + index, scheduleFile(100 + index, [flowId]), { actor: 'test', max })),
      remove: (scheduleId) => deleteSchedule(tenantId, scheduleId, undefined),
      count: () => findScheduleCount(tenantId),
    };
  },
  'live tenants of a client': async () => {
    const { client } = await createClient(`counts-client-${randomUUID()}`);
    const { clientId } = client;
    // A client made before the count: it has none.
    await deleteAll([stored.clientCount.key({ clientId, name: 'TENANTS' })]);
    const earlier = await at(5, async () => (await newTenantRecord(clientId)).tenant);
    // Four live, in the client's list; one deleted before the quota: no longer in the list, not counted.
    await putAll(
      earlier.map((tenant, index) => ({
        ...tenant,
        ...stored.tenant.key(tenant),
        ...(index < 4 ? stored.tenant.indexEntry(tenant) : { deletedAt: at2020 }),
      })),
    );
    const made = await at(22, () => newTenantRecord(clientId));
    return {
      records: [await clientRecord(clientId), ...(await Promise.all(earlier.map(({ tenantId }) => tenantRecord(tenantId))))],
      ids: earlier.slice(0, 4).map(({ tenantId }) => tenantId),
      create: (index, max) => written(insertTenant(made[index]?.tenant as TenantRecord, made[index]?.token as string, [], max)),
      remove: async (tenantId) => softDeleteTenant((await findTenant(tenantId)) as TenantRecord, now()),
      count: () => findClientCount(clientId, 'TENANTS'),
    };
  },
  'templates of a client': async () => {
    const { client } = await createClient(`counts-client-${randomUUID()}`);
    const { clientId } = client;
    await deleteAll([stored.clientCount.key({ clientId, name: 'TEMPLATES' })]);
    const ids = await at(4, () => allocateTemplateId());
    await putAll(
      ids.map((templateId) => ({
        ...stored.template.key({ clientId, templateId }),
        templateId,
        clientId,
        nome: `Earlier ${templateId}`,
        latestVersion: 1,
      })),
    );
    const made = await at(22, () => allocateTemplateId());
    return {
      records: [await clientRecord(clientId)],
      ids,
      create: (index, max) =>
        written(insertTemplate(clientId, made[index] as number, { ...retailBundle(), nome: `T${index}` }, [], max)),
      remove: async (templateId) => deleteTemplateRecord((await findTemplate(clientId, templateId)) as TemplateRecord, []),
      count: () => findClientCount(clientId, 'TEMPLATES'),
    };
  },
};

describe('migration 5: counts kept', () => {
  test('a tenant, a deleted tenant and their client of an earlier version get every count the writes keep, and read as before', async () => {
    const owner = await party(true);
    const reads = await readAll(owner);
    const before = await countsOf(owner);
    await storeAsEarlierVersion(owner);
    expect(await migrateParty(owner)).toBe(3);
    expect(await countsOf(owner)).toEqual(kept(before));
    expect(await readAll(owner)).toEqual(reads);
    // A sweep in the deleted tenant after the migration takes its membership off the count it now has.
    await deleteGroupMemberships(owner.gone.id, owner.gone.group);
    expect(await findCount(owner.gone.id, 'MEMBERSHIPS')).toBe(0);
  }, 300_000);

  test.each(Object.keys(kinds))(
    '%s written before the count: after the migration 20 creations at once where 6 fit make exactly 6; a deletion frees one place',
    async (kind) => {
      const seeded = await (kinds[kind] as () => Promise<Seeded>)();
      for (const record of seeded.records) await countsKept.migrate(record);
      expect(await seeded.count()).toBe(4);
      const outcomes = await at(20, (index) => seeded.create(index, 10));
      expect(outcomes.filter(Boolean)).toHaveLength(6);
      expect(await seeded.count()).toBe(10);
      await seeded.remove(seeded.ids[1] as number);
      expect(await seeded.count()).toBe(9);
      expect(await seeded.create(20, 10)).toBe(true);
      expect(await seeded.create(21, 10)).toBe(false);
    },
    60_000,
  );

  test("a tenant's agents from before names were claimed: counted, their names claimed (a name two shared, for one of them); a repeated name is refused", async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token);
    const token = tenant.token;
    expect((await api('POST', '/tenant/agents', { token, body: { nome: 'warehouse' } })).status).toBe(201);
    // As an earlier version could leave it: a second agent of the same name, no count, no name claims.
    const namesake = await allocateAgentId(tenant.id);
    await putAll([
      {
        ...stored.agent.key({ tenantId: tenant.id, agentId: namesake }),
        agentId: namesake,
        tenantId: tenant.id,
        clientId: client.clientId,
        nome: 'warehouse',
        isDefault: false,
        tokenHash: `earlier-${namesake}`,
        createdAt: at2020,
      },
    ]);
    await deleteAll([
      stored.agentCount.key({ tenantId: tenant.id }),
      ...(await agentClaims(tenant.id)).map(({ sk }) => ({ pk: stored.agentName.partition({ tenantId: tenant.id }), sk })),
    ]);
    const agents = (await api('GET', '/tenant/agents', { token })).body;

    await countsKept.migrate(await tenantRecord(tenant.id));
    expect((await getItem<{ value: number }>(stored.agentCount.key({ tenantId: tenant.id })))?.value).toBe(3);
    // The claim on the shared name names the agent listed last, the higher id; both agents stay.
    expect(Object.fromEntries((await agentClaims(tenant.id)).map(({ sk, agentId }) => [sk, agentId]))).toEqual({
      'AGENTNAME#default': 1,
      'AGENTNAME#warehouse': namesake,
    });
    expect((await api('GET', '/tenant/agents', { token })).body).toEqual(agents);

    const repeated = await api('POST', '/tenant/agents', { token, body: { nome: 'warehouse' } });
    expect(repeated.body.code).toBe('agent_name_taken');
    expect((await api('POST', '/tenant/agents', { token, body: { nome: 'erp' } })).status).toBe(201);
    expect((await getItem<{ value: number }>(stored.agentCount.key({ tenantId: tenant.id })))?.value).toBe(4);
  });

  test('stopped at any write, then run again, it ends with the same counts and claims', async () => {
    const writes = await stoppedAfterEachWrite({
      prepare: async () => {
        const owner = await party(false);
        const counts = kept(await countsOf(owner));
        await storeAsEarlierVersion(owner);
        return { owner, counts };
      },
      run: async ({ owner }) => {
        await migrateParty(owner);
      },
      check: async ({ owner, counts }, after) => expect(await countsOf(owner), after).toEqual(counts),
      width: 4,
    });
    // Six counts and the agents' commit for each tenant, two counts for the client.
    expect(writes).toBe(16);
  }, 600_000);
});
