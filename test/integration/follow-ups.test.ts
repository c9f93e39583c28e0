/**
 * Work that requests leave to finish after their main write (follow-ups) and the sweeper that
 * finishes it when they stop first. (Data stored by earlier versions is the migrations' to bring up
 * to date: test/integration/stored-data-migrations.test.ts and the migration-*.test.ts files.)
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { deleteUser } from '#functions/core/directory/users.ts';
import { followUpGraceMs, finishFollowUps } from '#functions/core/follow-ups/sweeper.ts';
import { followUpShards, listFollowUps } from '#functions/core/follow-ups/follow-up-repository.ts';
import { db, getItem, tableName } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { api } from '#test/support/api.ts';
import { populatedDatamart } from '#test/support/datamart-party.ts';

async function followUpsOf(tenantId: number) {
  const found = [];
  for (let shard = 0; shard < followUpShards; shard++) {
    found.push(...(await listFollowUps(shard, 100, undefined)).items.filter((followUp) => followUp.ownerId === tenantId));
  }
  return found;
}

describe('the follow-up sweeper', () => {
  test('finishes a deletion whose request stopped after its transaction, but only once the grace period is over', async () => {
    const party = await populatedDatamart();
    // The deletion's transaction, without the sweep the request does right after it.
    await deleteUser(party.tenant.id, party.user);
    expect(await followUpsOf(party.tenant.id)).toEqual([expect.objectContaining({ kind: 'sweep-user', subjectId: party.user })]);
    const memberKey = stored.membership.key({ tenantId: party.tenant.id, groupId: party.group, userId: party.user });
    expect(await getItem({ pk: memberKey.pk, sk: memberKey.sk })).toBeDefined();

    await finishFollowUps(Date.now(), Date.now() + 30_000);
    const [left] = await followUpsOf(party.tenant.id);
    expect(left).toBeDefined();

    // Time passes: the follow-up is now older than the grace period (other tests' fresh ones are not).
    const { pk, sk } = stored.followUp.key({
      shard: party.tenant.id % followUpShards,
      kind: 'sweep-user',
      ownerId: party.tenant.id,
      subjectId: party.user,
    });
    await db().send(
      new PutCommand({ TableName: tableName(), Item: { ...left, pk, sk, createdAt: Date.now() - followUpGraceMs - 1_000 } }),
    );
    const outcome = await finishFollowUps(Date.now(), Date.now() + 30_000);
    expect(outcome.finished).toBeGreaterThanOrEqual(1);
    expect(await followUpsOf(party.tenant.id)).toEqual([]);
    expect(await getItem({ pk: memberKey.pk, sk: memberKey.sk })).toBeUndefined();
    const permission = stored.permission.key({
      tenantId: party.tenant.id,
      datamartId: party.datamart,
      subject: 'user',
      subjectId: party.user,
      tableId: party.tables[0] as number,
    });
    expect(await getItem({ pk: permission.pk, sk: permission.sk })).toBeUndefined();
  });

  test('a request that finishes its own work leaves no follow-up behind', async () => {
    const party = await populatedDatamart();
    await api('DELETE', `/tenant/users/${party.user}`, { token: party.token });
    await api('DELETE', `/tenant/datamart/${party.datamart}`, { token: party.token });
    expect(await followUpsOf(party.tenant.id)).toEqual([]);
  });
});
