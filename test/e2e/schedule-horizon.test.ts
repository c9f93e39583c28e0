/**
 * The horizon through the twin (docs/schedules.md, Horizon): a start_when or period outside it is a
 * 400 at its field, never a stored `+010000-…` next fire or a 500; what the schedule routes answer
 * is within the contract (`format: date-time`, checked on every answer by test/support/api.ts).
 * A schedule an earlier version stored with a five-digit next fire is migrated:
 * test/integration/migration-schedules.test.ts.
 */
import { describe, expect, test } from 'vitest';
import type { Trigger } from '#functions/core/schedules/schedule-types.ts';
import { api, expectErrorEnvelope } from '#test/support/api.ts';
import { scheduleFile, tenantWithFlows } from '#test/support/schedules.ts';

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const hourly = (start_when: string, period = 1): Trigger => ({
  type: 'Hour',
  period,
  start_when,
  start_time: '00:00',
  end_time: '23:59',
});

describe('schedule horizon', () => {
  test('start_when past the horizon (the reported 9999-12-31T23:30Z and 9999-12-31T23:30-12:00) is a 400 at its field', async () => {
    const { tenant, flows } = await tenantWithFlows();
    for (const startWhen of ['9999-12-31T23:30:00Z', '9999-12-31T23:30-12:00', '2100-01-01T00:00:00Z', '1969-12-31T23:59:59Z']) {
      const answer = await api('PUT', '/tenant/schedules/1', {
        token: tenant.token,
        body: scheduleFile(1, [flows['load-orders'] as number], [hourly(startWhen)]),
      });
      const error = expectErrorEnvelope(answer, 400);
      expect(error.code).toBe('validation_failed');
      expect(error.errors.map((field: { pointer: string }) => field.pointer)).toEqual(['/body/triggers/0/start_when']);
    }
    expect((await api('GET', '/tenant/schedules', { token: tenant.token })).body.data).toEqual([]);
  });

  test('a period past the maximum is a 400, never a 500', async () => {
    const { tenant, flows } = await tenantWithFlows();
    for (const period of [525_601, 2 ** 53, 1e308]) {
      const answer = await api('PUT', '/tenant/schedules/1', {
        token: tenant.token,
        body: scheduleFile(1, [flows['load-orders'] as number], [hourly('2027-01-01T00:00Z', period)]),
      });
      expect(answer.status, `${period}: ${JSON.stringify(answer.body)}`).toBe(400);
      if (period === 525_601) {
        expect(answer.body.errors.map((field: { pointer: string }) => field.pointer)).toEqual(['/body/triggers/0/period']);
      }
    }
    const longest = await api('PUT', '/tenant/schedules/2', {
      token: tenant.token,
      body: scheduleFile(2, [flows['load-orders'] as number], [hourly('2027-01-01T00:00Z', 525_600)]),
    });
    expect(longest.status).toBe(201);
  });

  test('at the edge of the horizon: fires before its end are answered, none at or after it', async () => {
    const { tenant, flows } = await tenantWithFlows({ granularity: 'minutes' });
    const flow = flows['load-orders'] as number;
    const lastFires: Trigger = {
      type: 'Minute',
      period: 15,
      start_when: '2099-12-31T23:00Z',
      start_time: '00:00',
      end_time: '23:59',
    };
    expect(
      (await api('PUT', '/tenant/schedules/1', { token: tenant.token, body: scheduleFile(1, [flow], [lastFires]) })).status,
    ).toBe(201);
    // Its first slot would be 2100-01-01T00:00Z: no next fire.
    const none = scheduleFile(2, [flow], [hourly('2099-12-31T23:59:59Z')]);
    expect((await api('PUT', '/tenant/schedules/2', { token: tenant.token, body: none })).status).toBe(201);

    const listed = (await api('GET', '/tenant/schedules', { token: tenant.token })).body.data;
    expect(listed.map((schedule: { nextFireAt: string | null }) => schedule.nextFireAt)).toEqual([
      '2099-12-31T23:00:00.000Z',
      null,
    ]);
    const next = (await api('GET', '/tenant/schedules/1/next?count=100', { token: tenant.token })).body.data;
    expect(next.fires.map((fire: { utc: string }) => fire.utc)).toEqual([
      '2099-12-31T23:00:00.000Z',
      '2099-12-31T23:15:00.000Z',
      '2099-12-31T23:30:00.000Z',
      '2099-12-31T23:45:00.000Z',
    ]);
    for (const fire of next.fires) expect(fire.local).toMatch(rfc3339);
    expect((await api('GET', '/tenant/schedules/2/next?count=100', { token: tenant.token })).body.data.fires).toEqual([]);
  });
});
