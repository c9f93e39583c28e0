/**
 * What keys.ts (the store's key builders before the entity declarations) built, frozen before its
 * deletion: each of its builders over fixed samples (ids from 0 to Number.MAX_SAFE_INTEGER, hashes,
 * instants, names with Unicode and invisible characters, both subjects, optional arguments given
 * and not), in fixtures/golden-keys.json. The declaration call that replaced each builder must
 * still build the same, byte for byte. (Retired with its reader: `datamartStructurePrefix`, the
 * prefix of a datamart's `S#` items, which only migration 1 reads now, each kind by its own prefix.)
 */
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import * as stored from '#functions/core/store/entity-declarations.ts';

interface Row {
  builder: string;
  args: unknown[];
  output: unknown;
  /** templateName only: the name whose name key is `args[1]` (keys.ts took the key, the declaration takes the name). */
  nameKeyOf?: string;
}

const rows = JSON.parse(readFileSync(new URL('./fixtures/golden-keys.json', import.meta.url), 'utf8')) as Row[];

type Subject = 'user' | 'group';

/**
 * The declaration call that replaces each builder, called with the builder's arguments.
 */
const replacements: Record<string, (...args: never[]) => unknown> = {
  counter: (name: string) => stored.idCounter.key({ name }),
  tenantCounter: (tenantId: number, name: string) => stored.tenantIdCounter.key({ tenantId, name }),
  client: (clientId: number) => stored.client.key({ clientId }),
  clientCount: (clientId: number, name: string) => stored.clientCount.key({ clientId, name }),
  clientsIndex: (clientId: number) => stored.client.indexEntry({ clientId }),
  token: (tokenHash: string) => stored.token.key({ tokenHash }),
  tenant: (tenantId: number) => stored.tenant.key({ tenantId }),
  tenantCount: (tenantId: number, name: string) => stored.tenantCount.key({ tenantId, name }),
  clientTenantsIndex: (clientId: number, tenantId: number) => stored.tenant.indexEntry({ clientId, tenantId }),
  tenantDeletionRecord: (tenantId: number) => stored.tenantDeletionRecord.key({ tenantId }),
  template: (clientId: number, templateId: number) => stored.template.key({ clientId, templateId }),
  templatesPrefix: () => stored.template.keyPrefix({}),
  templateVersion: (clientId: number, templateId: number, version: number) =>
    stored.templateVersion.key({ clientId, templateId, version }),
  templateVersionsPrefix: (templateId: number) => stored.templateVersion.keyPrefix({ templateId }),
  templateName: (clientId: number, nome: string) => stored.templateName.key({ clientId, nome }),
  tenantResource: (tenantId: number, type: string, id: number) => stored.tenantResource.key({ tenantId, type, id }),
  tenantResourcesPrefix: (type?: string) => stored.tenantResource.keyPrefix({ type }),
  applyJournal: (tenantId: number) => stored.applyJournal.key({ tenantId }),
  agent: (tenantId: number, agentId: number) => stored.agent.key({ tenantId, agentId }),
  agentsPrefix: () => stored.agent.keyPrefix({}),
  agentName: (tenantId: number, nome: string) => stored.agentName.key({ tenantId, nome }),
  agentCount: (tenantId: number) => stored.agentCount.key({ tenantId }),
  run: (tenantId: number, runId: number) => stored.run.key({ tenantId, runId }),
  runsPrefix: () => stored.run.keyPrefix({}),
  agentPendingRunsIndex: (tenantId: number, agentId: number, runId: number) =>
    stored.run.indexEntry({ tenantId, agentId, runId }),
  user: (tenantId: number, userId: number) => stored.user.key({ tenantId, userId }),
  usersPrefix: () => stored.user.keyPrefix({}),
  userLogin: (tenantId: number, login: string) => stored.userLogin.key({ tenantId, login }),
  group: (tenantId: number, groupId: number) => stored.group.key({ tenantId, groupId }),
  groupsPrefix: () => stored.group.keyPrefix({}),
  membership: (tenantId: number, groupId: number, userId: number) => ({
    ...stored.membership.key({ tenantId, groupId, userId }),
    ...stored.membership.indexEntry({ tenantId, groupId, userId }),
  }),
  membershipsPrefix: (groupId?: number) => stored.membership.keyPrefix({ groupId }),
  userMembershipsIndex: (tenantId: number, userId: number) => stored.membership.indexes.gsi1.partition({ tenantId, userId }),
  datamartPartition: (tenantId: number, datamartId: number) => stored.datamart.partition({ tenantId, datamartId }),
  datamart: (tenantId: number, datamartId: number) => stored.datamart.key({ tenantId, datamartId }),
  datamartsIndex: (tenantId: number, datamartId: number) => stored.datamart.indexEntry({ tenantId, datamartId }),
  datamartTable: (tenantId: number, datamartId: number, tableId: number) =>
    stored.datamartTable.key({ tenantId, datamartId, tableId }),
  datamartOwner: (tenantId: number, datamartId: number, userId: number) => ({
    ...stored.datamartOwner.key({ tenantId, datamartId, userId }),
    ...stored.datamartOwner.indexEntry({ tenantId, datamartId, userId }),
  }),
  ownerIndex: (tenantId: number, userId: number) => stored.datamartOwner.indexes.gsi1.partition({ tenantId, userId }),
  datamartOwnersIndex: (tenantId: number, userId: number) => stored.user.indexEntry({ tenantId, userId }),
  datamartOwnersPartition: (tenantId: number) => stored.user.indexes.gsi1.partition({ tenantId }),
  permission: (tenantId: number, datamartId: number, subject: Subject, subjectId: number, tableId: number) => ({
    ...stored.permission.key({ tenantId, datamartId, subject, subjectId, tableId }),
    ...stored.permission.indexEntry({ tenantId, datamartId, subject, subjectId, tableId }),
  }),
  permissionIndex: (tenantId: number, datamartId: number, subject: Subject, subjectId: number, tableId: number) =>
    stored.permission.indexEntry({ tenantId, datamartId, subject, subjectId, tableId }),
  permissionsPrefix: (subject?: Subject, subjectId?: number) => stored.permission.keyPrefix({ subject, subjectId }),
  tenantPermissionsPartition: (tenantId: number) => stored.permission.indexes.gsi1.partition({ tenantId }),
  tenantPermissionsPrefix: (subject: Subject, subjectId?: number) =>
    stored.permission.indexes.gsi1.keyPrefix({ subject, subjectId }),
  legacySubjectPermissionsIndex: (tenantId: number, subject: Subject, subjectId: number) =>
    stored.permission.legacyIndexes.gsi1.partition({ tenantId, subject, subjectId }),
  schedule: (tenantId: number, scheduleId: number) => stored.schedule.key({ tenantId, scheduleId }),
  schedulesPrefix: () => stored.schedule.keyPrefix({}),
  dueSchedulesIndex: (shard: number, nextFireAt: string, turn: number, tenantId: number, scheduleId: number) =>
    stored.schedule.indexEntry({ shard, nextFireAt, turn, tenantId, scheduleId }),
  dueSchedulesShard: (shard: number) => stored.schedule.indexes.gsi1.partition({ shard }),
  dispatchCursor: (shard: number) => stored.dispatchCursor.key({ shard }),
  dispatchShards: () => stored.dispatchShards.key({}),
  scheduleRun: (tenantId: number, scheduleId: number, slot: string) => stored.scheduleRun.key({ tenantId, scheduleId, slot }),
  scheduleRunsPrefix: (scheduleId: number) => stored.scheduleRun.keyPrefix({ scheduleId }),
  tenantSettings: (tenantId: number) => stored.tenantSettings.key({ tenantId }),
  alert: (tenantId: number, alertId: number) => stored.alert.key({ tenantId, alertId }),
  alertsPrefix: () => stored.alert.keyPrefix({}),
  delivery: (tenantId: number, deliveryId: number, alertId: number) => ({
    ...stored.delivery.key({ tenantId, deliveryId }),
    ...stored.delivery.indexEntry({ tenantId, deliveryId, alertId }),
  }),
  deliveryKey: (tenantId: number, deliveryId: number) => stored.delivery.key({ tenantId, deliveryId }),
  alertDeliveriesIndex: (tenantId: number, alertId: number) => stored.delivery.indexes.gsi1.partition({ tenantId, alertId }),
  deliveryBody: (tenantId: number, deliveryId: number) => stored.deliveryBody.key({ tenantId, deliveryId }),
  webhookEndpoint: (tenantId: number) => stored.webhookEndpoint.key({ tenantId }),
  webhookSlot: (tenantId: number, slot: number) => stored.webhookSlot.key({ tenantId, slot }),
  webhookEndpointPrefix: () => stored.collections.webhookEndpoint.keyPrefix,
  session: (sessionHash: string) => stored.session.key({ sessionHash }),
  recordedLoad: (tenantId: number, deduplicationId: string) => stored.recordedLoad.key({ tenantId, deduplicationId }),
  // keys.ts took the shard count; the declaration takes the shard the follow-up's owner falls on.
  followUp: (shards: number, ownerId: number, kind: string, subjectId: number) =>
    stored.followUp.key({ shard: ownerId % shards, kind, ownerId, subjectId }),
  followUpShard: (shard: number) => stored.followUp.partition({ shard }),
  idempotency: (scope: string, keyHash: string) => stored.idempotency.key({ scope, keyHash }),
  isIdempotencyRecord: (pk: unknown) => typeof pk === 'string' && pk.startsWith(stored.idempotency.partitionPrefix({})),
};

const builders = [...new Set(rows.map((row) => row.builder))];

test.each(builders)('%s: the declaration builds what keys.ts built, byte for byte', (builder) => {
  const replacement = replacements[builder] as (...args: unknown[]) => unknown;
  for (const { args, output, nameKeyOf } of rows.filter((row) => row.builder === builder)) {
    const given = nameKeyOf === undefined ? args : [args[0], nameKeyOf];
    expect(replacement(...given), JSON.stringify(args)).toStrictEqual(output);
  }
});

test('every builder of the fixture has its replacement, and every replacement its rows', () => {
  expect(builders.filter((builder) => !(builder in replacements))).toEqual([]);
  expect(Object.keys(replacements).filter((builder) => !builders.includes(builder))).toEqual([]);
});
