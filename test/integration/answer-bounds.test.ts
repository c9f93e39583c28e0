/**
 * The generated size test over the route table (issue 33): every route's largest answer fits one
 * Lambda result (lambdaSyncPayloadBytes, measured as Lambda does on the result object) or pages, and
 * every route's largest request fits one invocation event.
 *
 * - `shown` says, for every route the worst cases below do not build, why its answer cannot grow past
 *   the limit: `fixed` (its size does not depend on stored data), `bounded` (a bound worked out from
 *   the quotas and schemas, with its number) or `coveredBy` (a test elsewhere that builds that route's
 *   worst answer). The first test fails for a route with neither an entry nor a case here, and for
 *   an entry naming no route.
 * - The worst cases store items at their size bounds with the worst escaping (a `"` takes 4 bytes as
 *   it travels in the result, a control character 7, an astral character its 4 UTF-8 bytes), the
 *   data an earlier version wrote straight to the table where the rules are newer than the data, and
 *   read every answer through the real pipeline (callRoute: the handler, in this process).
 * - A page read from DynamoDB is at most 1 MB of items (its Query limit), so only items that are
 *   mostly control characters (7 bytes each as they travel) make a page over 6 MiB: the paged cases
 *   store items of some 50 KB of them, about 20 to a DynamoDB page, and follow `nextCursor` to the end.
 * - Routes whose worst answer does not fit today are `knownDefects`: their cases expect the failure
 *   (DoesNotFit) and fail once the route is fixed, to be taken off the list.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { eventBytes, apiGatewayEvent } from '#local/api-gateway-event.ts';
import { maxBodyBytes, worstEventBytes } from '#functions/core/api/request-body.ts';
import { matchRoute } from '#functions/core/api/route-matching.ts';
import { docsAssets } from '#functions/http/docs-asset.ts';
import { dynamoItemBytes, httpApiRequestLineAndHeaderBytes, lambdaSyncPayloadBytes } from '#functions/core/aws-limits.ts';
import { rotateAgentToken, maxAgentsPerTenant } from '#functions/core/agents/agents.ts';
import { listAgents } from '#functions/core/agents/agent-repository.ts';
import { maxAlertContentBytes } from '#functions/core/alerts/alerts.ts';
import {
  allocateAlertId,
  allocateDeliveryIds,
  type AlertRecord,
  type AlertDeliveryRecord,
  type DeliveryRecord,
  type EventDeliveryRecord,
  insertAlert,
  insertDelivery,
} from '#functions/core/alerts/alert-repository.ts';
import { maxTemplatesPerClient } from '#functions/core/clients/quotas.ts';
import { maxDatamartBytes, maxGroupPermissionBytes, maxUserPermissionBytes } from '#functions/core/directory/quotas.ts';
import { recordDispatchedRun } from '#functions/core/reload/runs.ts';
import { outcomes } from '#functions/core/rollouts/rollout-repository.ts';
import { describeRollout, maxWaves } from '#functions/core/rollouts/rollouts.ts';
import { putRuns, scheduleItem, type ScheduleRunRecord } from '#functions/core/schedules/schedule-repository.ts';
import type { ScheduleFile } from '#functions/core/schedules/schedule-types.ts';
import { putAll } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { resourceBytes, tenantLimits } from '#functions/core/templates/apply-check.ts';
import { writeResources } from '#functions/core/templates/template-repository.ts';
import type { StoredResource } from '#functions/core/templates/tenant-resources.ts';
import { allocateTenantId } from '#functions/core/tenants/tenant-repository.ts';
import { clientOwner, tenantOwner, type WebhookOwner } from '#functions/core/webhooks/owner.ts';
import { maxDevelopmentVariablesBytes } from '#functions/core/tenants/tenants.ts';
import { type Route, routeKey, routes } from '#functions/routes.ts';
import { newClient } from '#test/support/api.ts';
import { each } from '#test/support/each.ts';
import { type Answer, type Call, callRoute } from '#test/support/in-process.ts';

const limit = lambdaSyncPayloadBytes;

/** What the result object adds around a body (status, headers, the envelope's own fields), generously. */
const envelope = 16 * 1024;
/** The most bytes one character of visible text takes as it travels: `"` and `\` (escaped twice), an astral character. */
const visible = 4;
/** The most bytes any stored byte takes as it travels: a control character, `\u0001` escaped once more (`\\u0001`). */
const anyByte = 7;
/** An answer made of one item's fields: DynamoDB's item limit, each byte at its worst. */
const oneItem = anyByte * dynamoItemBytes + envelope;
/** The bytes `value` takes in a body as it travels in the result: its JSON, escaped once more (without the outer quotes). */
const travelBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(JSON.stringify(value))) - 2;

const schema = (name: string) => JSON.parse(readFileSync(new URL(`../../schemas/${name}.schema.json`, import.meta.url), 'utf8'));
const reloadItems = schema('reload').properties.items;
const datamartTables: number = schema('create-datamart').properties.tables.maxItems;
const countQuery = routes.find((route) => route.path === '/tenant/schedules/{id}/next')?.query?.[0]?.schema;
const maxCount = countQuery && 'maximum' in countQuery ? countQuery.maximum : Number.NaN;

/**
 * The plan an apply answers: one item per flow that writes a table it rebuilt, at most every flow
 * the tenant has, which `tenantLimits` bound by count and by size as stored (the JSON of each
 * resource). A context of control characters costs 6 bytes stored (JSON) and 7 in the answer, one of
 * quotes 2 and 4, a one-character context little of either: the worst tenant mixes two of these
 * flows (a linear program's optimum is at a vertex), so the bound is the largest answer over every
 * pair at both limits. The flows' other fields are as small as stored (they cost stored bytes and add
 * nothing to the plan), the plan's own (ids) as large as they get.
 */
function applyPlanBound(): number {
  const flow = (context: string) => {
    const resource: StoredResource = {
      tenantId: 1,
      id: 99_999,
      key: 'f99',
      nome: 'F',
      templateId: 1,
      changedInVersion: 1,
      type: 'flow',
      connectionKey: 'c',
      reads: [],
      writes: ['t'],
      context,
    };
    const planItem = { flowId: resource.id, tokenId: 999_999_999, context };
    return { stored: resourceBytes(resource), travels: travelBytes(planItem) + 1 };
  };
  const length: number = reloadItems.items.properties.context.maxLength;
  const kinds = [flow('\u0001'.repeat(length)), flow('"'.repeat(length)), flow('a')];
  const { flows, bytes: storedBytes } = tenantLimits;
  let most = 0;
  for (const a of kinds) {
    for (const b of kinds) {
      // All of `a` the limits allow, or `a` and `b` filling both limits at once.
      const alone = Math.min(flows, storedBytes / a.stored);
      const both = a.stored === b.stored ? 0 : (storedBytes - flows * b.stored) / (a.stored - b.stored);
      const mixes = [[alone, 0]];
      if (both > 0 && both < flows) mixes.push([both, flows - both]);
      for (const [countA = 0, countB = 0] of mixes) most = Math.max(most, countA * a.travels + countB * b.travels);
    }
  }
  return Math.ceil(most) + envelope;
}

/**
 * A rollout as every route that answers one shows it (describeRollout) at the schemas' and the service's
 * bounds: 1,000 tenant ids asked for, `maxWaves` waves each with its times and counts, every number at its
 * longest. A rollout's view holds nothing else that grows.
 */
function rolloutViewBound(): number {
  const most = Number.MAX_SAFE_INTEGER;
  const selectionItems: number = schema('create-rollout').properties.tenants.oneOf[1].maxItems;
  const counts = Object.fromEntries(outcomes.map((outcome) => [outcome, most])) as Record<(typeof outcomes)[number], number>;
  const time = new Date(0).toISOString();
  const view = describeRollout(
    {
      clientId: most,
      templateId: most,
      rolloutId: most,
      version: most,
      state: 'running',
      pauseReason: 'failure_budget',
      selection: Array.from({ length: selectionItems }, () => most),
      total: most,
      waveSize: most,
      waves: maxWaves,
      pauseSeconds: most,
      failureBudget: most,
      reload: true,
      planned: most,
      planCursor: null,
      wave: maxWaves - 1,
      waveStartedAt: time,
      nextWaveAt: 0,
      finishedWaves: Array.from({ length: maxWaves - 1 }, (_, wave) => ({ wave, startedAt: time, finishedAt: time, counts })),
      counts,
      budgetFrom: most,
      createdAt: time,
      updatedAt: time,
      finishedAt: time,
      expiresAt: most,
    },
    [],
  );
  return travelBytes(view) + envelope;
}

/** How a route's worst answer is shown to fit when no case below builds it. */
type Shown =
  /** Its size does not depend on stored data: why. */
  | { fixed: string }
  /** A bound worked out from the quotas and schemas: why, and the number (asserted to be under the limit). */
  | { bounded: string; bytes: number }
  /** A test that builds and measures this route's worst answer: `file › test name`. */
  | { coveredBy: string };

const answerSizes = 'test/integration/answer-sizes.test.ts';
const groupsAtQuotas =
  'test/unit/answer-bound.test.ts › the list of groups, and one group, at the quotas: under 6 MB as they travel';
const worstUser = `${answerSizes} › a user in 1,000 groups of the worst names, with the group and user permission budgets spent on the worst records: under 6 MB`;

const shown: Record<string, Shown> = {
  'GET /health': { fixed: '{status, data: {status: "ok"}}' },
  'GET /docs': { fixed: 'a constant HTML page (measured in "constant answers")' },
  'GET /whoami': { fixed: "the token's principal: its kind and ids" },
  'POST /tenants': { fixed: 'the new tenant: id, nome (the request’s, at most 200 characters), token, dominio, ativo' },
  'POST /tenants/delete': { fixed: '{status, data: true}' },
  'DELETE /tenants': { fixed: '{status, data: true}' },
  'POST /tenants/{id}/deactivate': {
    bounded: "one tenant item's summary (id, nome, dominio, ativo, pendingTemplateId)",
    bytes: oneItem,
  },
  'POST /tenants/{id}/activate': {
    bounded: "one tenant item's summary (id, nome, dominio, ativo, pendingTemplateId)",
    bytes: oneItem,
  },
  'POST /tenants/{id}/token': { fixed: '{id, token, previousExpiresAt}' },
  'DELETE /tenants/{id}/token/previous': { fixed: '{id, ended}' },
  'POST /tenants/templates': { fixed: 'the template published: id, nome (the request’s), version' },
  'GET /tenants/templates': {
    bounded: `at most maxTemplatesPerClient (${maxTemplatesPerClient}) templates of {id, nome of at most 200 visible characters}`,
    bytes: maxTemplatesPerClient * (200 * visible + 64) + envelope,
  },
  'DELETE /tenants/templates/{id}': { fixed: '{status, data: true}' },
  'PUT /tenants/templates/{id}': { fixed: 'the template published: id, nome (the request’s), version' },
  'PUT /tenants/templates/default': { fixed: '{templateId}' },
  'GET /tenants/templates/{id}/tenants': {
    bounded:
      "a page cut to what fits one result (pageResponse), each entry one tenant item's nome beside the numbers and " +
      'flags of its fleet item',
    bytes: oneItem,
  },
  'GET /tenants/templates/{id}/rollouts': {
    bounded: 'a page cut to what fits one result (pageResponse), each entry a rollout as rolloutViewBound bounds it',
    bytes: rolloutViewBound(),
  },
  'GET /tenants/templates/{id}/rollouts/{rolloutId}': {
    bounded: 'one rollout (rolloutViewBound: 1,000 tenant ids and 100 waves at most)',
    bytes: rolloutViewBound(),
  },
  'GET /tenants/templates/{id}/rollouts/{rolloutId}/tenants': {
    bounded:
      "a page cut to what fits one result (pageResponse), each entry one target item's fields (its error, reload plan " +
      'and reload error included)',
    bytes: oneItem,
  },
  'POST /tenants/templates/{id}/rollouts/{rolloutId}/pause': {
    bounded: 'one rollout (rolloutViewBound: 1,000 tenant ids and 100 waves at most)',
    bytes: rolloutViewBound(),
  },
  'POST /tenants/templates/{id}/rollouts/{rolloutId}/resume': {
    bounded: 'one rollout (rolloutViewBound: 1,000 tenant ids and 100 waves at most)',
    bytes: rolloutViewBound(),
  },
  'POST /tenants/templates/{id}/rollouts/{rolloutId}/cancel': {
    bounded: 'one rollout (rolloutViewBound: 1,000 tenant ids and 100 waves at most)',
    bytes: rolloutViewBound(),
  },
  'POST /tenant/templates/apply': {
    bounded:
      'one plan item per flow the tenant has, which tenantLimits bound (5,000 flows, 5 MB as stored): the worst mix of ' +
      'contexts of control characters and of quotes over both limits (applyPlanBound)',
    bytes: applyPlanBound(),
  },
  'POST /tenant/runs/{id}/retry': {
    bounded: "one run item's flow, agent, context and batch id, and the id retried",
    bytes: oneItem,
  },
  'POST /tenant/templates/reload': {
    bounded: `one result per request item: at most ${reloadItems.maxItems}, each with a context of at most ${reloadItems.items.properties.context.maxLength} characters`,
    bytes: reloadItems.maxItems * (reloadItems.items.properties.context.maxLength * anyByte + 256) + envelope,
  },
  'GET /tenant/audit': {
    bounded:
      'a page cut to what fits one result (pageResponse), each entry one audit record item; as NDJSON, at most 100 records ' +
      'of at most 64 field names of 128 characters, a path of 1,024, a request id of 128 (audit-record.ts bounds them)',
    bytes: oneItem,
  },
  'GET /tenants/audit': {
    bounded:
      'a page cut to what fits one result (pageResponse), each entry one audit record item; as NDJSON, at most 100 records ' +
      'of at most 64 field names of 128 characters, a path of 1,024, a request id of 128 (audit-record.ts bounds them)',
    bytes: oneItem,
  },
  'GET /tenant/agents': {
    bounded: `at most maxAgentsPerTenant (${maxAgentsPerTenant}) agents of {id, nome of at most 200 visible characters, flags, lastSeenAt, its two tokens' dates}`,
    bytes: maxAgentsPerTenant * (200 * visible + 512) + envelope,
  },
  'POST /tenant/agents': { fixed: 'the new agent: id, nome (the request’s), token' },
  'POST /tenant/agents/{id}/token': { fixed: '{id, token, previousExpiresAt}' },
  'DELETE /tenant/agents/{id}/token/previous': { fixed: '{id, ended}' },
  'POST /tenant/users': { fixed: 'the new user: id and the request’s nome, login, email (each at most 254 characters)' },
  'GET /tenant/users': { coveredBy: worstUser },
  'GET /tenant/users/{id}': { coveredBy: worstUser },
  'PATCH /tenant/users/{id}': { bounded: "one user item's id, nome, login, email", bytes: oneItem },
  'DELETE /tenant/users/{id}': { fixed: '{status, data: true}' },
  'POST /tenant/groups': { fixed: '{id, nome (the request’s), members: []}' },
  'GET /tenant/groups': { coveredBy: groupsAtQuotas },
  'GET /tenant/groups/{id}': { coveredBy: groupsAtQuotas },
  'DELETE /tenant/groups/{id}': { fixed: '{status, data: true}' },
  'PUT /tenant/groups/{id}/members/{userId}': { fixed: '{groupId, userId, member}' },
  'DELETE /tenant/groups/{id}/members/{userId}': { fixed: '{groupId, userId, member}' },
  'POST /tenant/datamart': {
    bounded: 'the datamart written, which must take at most maxDatamartBytes as it travels (checked when written)',
    bytes: maxDatamartBytes + envelope,
  },
  'PATCH /tenant/datamart/{id}': {
    bounded: 'the datamart written, which must take at most maxDatamartBytes as it travels (checked when written)',
    bytes: maxDatamartBytes + envelope,
  },
  'DELETE /tenant/datamart/{id}': { fixed: '{status, data: true}' },
  'GET /tenant/datamart/{id}/user': {
    bounded:
      'listAnswer: the whole list within one answer, or a 400 naming a limit that fits; a page of one record takes at ' +
      "most its charge against the user's budget (maxUserPermissionBytes, in bytes as it travels)",
    bytes: maxUserPermissionBytes + envelope,
  },
  'GET /tenant/datamart/{id}/group': { coveredBy: worstUser },
  'PUT /tenant/datamart/{id}/user/{userId}': {
    bounded: "the user's records on the datamart: at most maxUserPermissionBytes as they travel (charged when written)",
    bytes: maxUserPermissionBytes + envelope,
  },
  'DELETE /tenant/datamart/{id}/user/{userId}': { fixed: '{status, data: []}' },
  'PUT /tenant/datamart/{id}/group/{groupId}': {
    bounded: "the group's records: at most maxGroupPermissionBytes as they travel, the tenant's whole group budget",
    bytes: maxGroupPermissionBytes + envelope,
  },
  'DELETE /tenant/datamart/{id}/group/{groupId}': { fixed: '{status, data: []}' },
  'GET /tenant/datamart/{id}/user/{userId}/effective': {
    bounded:
      "one entry per table of the datamart (at most 200), each adding at most the charges of the records it comes from: the user's " +
      "budget and the tenant's group budget (maxUserPermissionBytes + maxGroupPermissionBytes, as they travel)",
    bytes: maxUserPermissionBytes + maxGroupPermissionBytes + datamartTables * 512 + envelope,
  },
  'DELETE /tenant/schedules/{id}': { fixed: '{status, data: true}' },
  'GET /tenant/schedules/{id}/next': {
    bounded: `at most count=${maxCount} fires, each an instant in UTC and in the schedule's time zone (an IANA name)`,
    bytes: maxCount * 256 + 64 * anyByte + envelope,
  },
  'GET /tenant/settings': {
    bounded: "the webhook channel of the settings item and the endpoint's state item: two items",
    bytes: 2 * anyByte * dynamoItemBytes + envelope,
  },
  'PATCH /tenant/settings': {
    bounded: "the webhook channel of the settings item and the endpoint's state item: two items",
    bytes: 2 * anyByte * dynamoItemBytes + envelope,
  },
  'POST /tenant/settings/webhook/secret': {
    bounded: "the webhook channel of the settings item and the endpoint's state item: two items",
    bytes: 2 * anyByte * dynamoItemBytes + envelope,
  },
  'POST /tenant/alerts': {
    bounded:
      'the alert written: its content at most maxAlertContentBytes as JSON (checked when written), which escaping at most ' +
      'doubles as it travels (text holds no control characters), and a nome of 200 visible characters',
    bytes: 2 * maxAlertContentBytes + 200 * visible + envelope,
  },
  'DELETE /tenant/alerts/{id}': { fixed: '{status, data: true}' },
  'POST /tenant/alerts/{id}/send': { fixed: 'the delivery queued: {id, webhookId, status}' },
  'POST /tenant/alerts/{id}/fire': { fixed: 'the delivery queued: {id, webhookId, status}' },
  'POST /tenant/deliveries/{id}/redeliver': { bounded: "one delivery item's record", bytes: oneItem },
  'GET /tenants/settings': {
    bounded: "the client's webhook channel of its settings item and the endpoint's state item: two items",
    bytes: 2 * anyByte * dynamoItemBytes + envelope,
  },
  'PATCH /tenants/settings': {
    bounded: "the client's webhook channel of its settings item and the endpoint's state item: two items",
    bytes: 2 * anyByte * dynamoItemBytes + envelope,
  },
  'POST /tenants/settings/webhook/secret': {
    bounded: "the client's webhook channel of its settings item and the endpoint's state item: two items",
    bytes: 2 * anyByte * dynamoItemBytes + envelope,
  },
  'POST /tenants/deliveries/{id}/redeliver': { bounded: "one event delivery item's record", bytes: oneItem },
  'POST /tenant/login': {
    fixed:
      'a login token (ids, the login of at most 200 characters, the domain) and the URL that carries it with the ' +
      "request's route (at most 2,000 characters, Base64-encoded)",
  },
  'POST /tenant/login/revoke': { fixed: '{success: true}' },
  'GET /auth/api/{token}': {
    fixed: "a redirect whose Location is the request's own ref (within the request line's 10,240 bytes), or a constant page",
  },
  'GET /auth/session': {
    bounded:
      "the session's user (id, nome, login) and tenant (id, nome, dominio): schema-bounded names of at most 200 characters " +
      'and a domain name',
    bytes: 4 * 253 * visible + 512 + envelope,
  },
};

/** A route's worst answer does not fit one Lambda result, or is not answered (a 400 `answer_too_large`). */
class DoesNotFit extends Error {}

/**
 * Route keys whose worst case fails today (reported to the lead): their tests expect DoesNotFit,
 * and fail once the route answers within the limit. Empty this list to see each failure.
 */
const knownDefects = new Set<string>([]);

/** Route keys the worst cases of this file build, with the case's name. */
const cased = new Map<string, string>();

/** Registers a worst case for `keys`; one whose routes are all known defects is expected to fail with DoesNotFit. */
function worstCase(name: string, routeKeys: readonly string[], run: () => Promise<void>, timeout = 120_000) {
  for (const key of routeKeys) cased.set(key, name);
  const defective = routeKeys.filter((key) => knownDefects.has(key));
  if (defective.length === 0) {
    test(name, run, timeout);
    return;
  }
  if (defective.length !== routeKeys.length) throw new Error(`${name}: mixes known defects with routes that fit`);
  test(
    `${name} (known defect: ${defective.join(', ')})`,
    async () => {
      await expect(run()).rejects.toBeInstanceOf(DoesNotFit);
    },
    timeout,
  );
}

/** A 200 whose result fits one Lambda result; anything else is DoesNotFit, with what came back. */
function expectFits(answer: Answer, label: string): void {
  if (answer.status === 200 && answer.resultBytes <= limit) return;
  const said = typeof answer.body === 'object' ? ` ${answer.body?.code}: ${answer.body?.message}` : '';
  throw new DoesNotFit(`${label}: ${answer.status}${said}, result ${answer.resultBytes} bytes (the limit is ${limit})`);
}

/** Any answer, even a refusal, is within the limit (never the gateway's bare 500). */
function expectWithinLimit(answer: Answer, label: string): void {
  expect(answer.resultBytes, label).toBeLessThanOrEqual(limit);
}

const call = (method: string, path: string, token: string, extra: Omit<Call, 'method' | 'path' | 'token'> = {}) =>
  callRoute({ method, path, token, ...extra });

/** A tenant of a client of its own: its ids and token. */
async function newTenant(body: Record<string, unknown> = {}) {
  const client = await newClient();
  const created = await call('POST', '/tenants', client.token, { body: { nome: 'Bounds', ativo: true, ...body } });
  expect(created.status).toBe(201);
  return { client, tenantId: created.body.data.id as number, token: created.body.data.token as string };
}

/** The token of the tenant's default agent, and its id. */
async function defaultAgent(tenantId: number) {
  const agent = (await listAgents(tenantId)).find((candidate) => candidate.isDefault);
  if (!agent) throw new Error(`Tenant ${tenantId} has no default agent`);
  return { agentId: agent.agentId, token: (await rotateAgentToken(tenantId, agent.agentId)).token };
}

/**
 * Reads a paginated route from its first page, following `nextCursor` until null: every page is a
 * 200 within the limit. Answers the items in order, with the size of each answer.
 */
async function readAllPages(path: string, token: string) {
  const items: Array<Record<string, unknown>> = [];
  const sizes: number[] = [];
  let cursor: string | null = null;
  do {
    const separator = path.includes('?') ? '&' : '?';
    const answer: Answer = await call('GET', cursor ? `${path}${separator}cursor=${cursor}` : path, token);
    expectFits(answer, `GET ${path} (page ${sizes.length + 1})`);
    items.push(...answer.body.data);
    sizes.push(answer.resultBytes);
    cursor = answer.body.nextCursor;
    if (sizes.length > 500) throw new Error(`GET ${path}: the cursor chain does not end`);
  } while (cursor);
  return { items, sizes };
}

/** The cursor chain read each item once, and all of them: `expected` ids, in the list's order or any. */
function expectEachOnce(read: ReadonlyArray<Record<string, unknown>>, expected: readonly unknown[], key = 'id') {
  const ids = read.map((item) => item[key]);
  expect(new Set(ids).size, 'no item read twice').toBe(ids.length);
  expect([...ids].sort(), 'every item read').toEqual([...expected].sort());
}

/**
 * The items are as large as the cases need: the first `perDynamoPage` of them fit in one DynamoDB
 * page (1 MB as stored, which a Query returns at most), and yet take more than one result as they
 * travel, so an answer of that page must be cut.
 */
function expectDynamoPageOverLimit(items: ReadonlyArray<unknown>, storedBytesEach: number) {
  const perDynamoPage = Math.min(50, Math.floor(1_000_000 / storedBytesEach));
  const travelling = items.slice(0, perDynamoPage).reduce<number>((total, item) => total + travelBytes(item), 0);
  expect(travelling, `${perDynamoPage} items of one DynamoDB page, as they travel`).toBeGreaterThan(limit);
}

/** A string of control characters that an earlier version could store (1 byte stored, 7 as it travels). */
const controls = (count: number) => '\u0001'.repeat(count);

/** About 50 KB of control characters a text: some 20 to a DynamoDB page, 350 KB each as they travel. */
const denseText = controls(50_000);
const denseStored = 51_000;

// --------------------------------------------------------------------------------------------------

test('every route of the table is shown to fit: a worst case here, a test that measures it, or a bound', () => {
  const table = routes.map(routeKey);
  const entries = [...Object.keys(shown), ...cased.keys()];
  expect(
    table.filter((key) => !entries.includes(key)),
    'routes with no worst case and no entry',
  ).toEqual([]);
  expect(
    entries.filter((key) => !table.includes(key)),
    'entries naming no route',
  ).toEqual([]);
  expect(
    table.filter((key) => key in shown && cased.has(key)),
    'routes both cased here and given an entry',
  ).toEqual([]);
  expect(
    [...knownDefects].filter((key) => !cased.has(key)),
    'known defects without a case',
  ).toEqual([]);
  for (const [key, entry] of Object.entries(shown)) {
    if ('bounded' in entry) expect(entry.bytes, `${key}: ${entry.bounded}`).toBeLessThanOrEqual(limit);
    if ('coveredBy' in entry) {
      const [file = '', name = ''] = entry.coveredBy.split(' › ');
      expect(readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8'), `${key}: ${entry.coveredBy}`).toContain(name);
    }
  }
});

// --------------------------------------------------------------------------------------------------

describe('requests: the largest body every route takes fits one invocation event', () => {
  const withBody = routes.filter((route): route is Route & { body: string } => route.body !== undefined);
  const pathOf = (route: Route) => route.path.replace(/\{[^}]+\}/g, '1');

  /**
   * The worst event of `route`: a body of `maxBodyBytes` control characters (6 bytes each in the
   * event's JSON; binary bodies travel base64), and the request line and header values filling the
   * HTTP API's 10,240 bytes, `filler` holding what is left in characters escaped to 6 bytes (obs-text
   * bytes, which the event carries as \u00XX). The host appears three times in the event (headers,
   * domainName, domainPrefix), the user agent twice.
   */
  function worstEvent(route: Route, filler: 'host' | 'user-agent' | 'x-filler' | 'cookie', bodyBytes: number, binary = false) {
    const path = pathOf(route);
    const match = matchRoute(route.method, path, routes);
    if (!match) throw new Error(`No route for ${route.method} ${path}`);
    const headers: Record<string, string> = {
      host: 'localhost',
      authorization: `Bearer ${'t'.repeat(160)}`,
      'content-type': binary ? 'application/octet-stream' : 'application/json',
    };
    const used =
      Buffer.byteLength(`${route.method} ${path} HTTP/1.1`) +
      Object.entries(headers)
        .filter(([name]) => name !== filler)
        .reduce((total, [, value]) => total + Buffer.byteLength(value, 'latin1'), 0);
    const fill = '\u00ff'.repeat(httpApiRequestLineAndHeaderBytes - used);
    let cookies: string[] | undefined;
    if (filler === 'cookie') cookies = [`c=${fill.slice(2)}`];
    else headers[filler] = fill;
    return apiGatewayEvent({
      method: route.method,
      routeKey: routeKey(route),
      pathParameters: match.pathParameters,
      path,
      rawQuery: '',
      headers,
      cookies,
      body: Buffer.alloc(bodyBytes, binary ? 0xff : 0x01),
      protocol: 'HTTP/1.1',
      sourceIp: '203.0.113.7',
    });
  }

  test('the worst event of each route with a body is within the synchronous invocation limit, and within worstEventBytes', () => {
    expect(withBody.length).toBeGreaterThan(20);
    // The filler that costs the event most, found on one route (the others differ only in their path).
    const fillers = (['host', 'user-agent', 'x-filler', 'cookie'] as const).map((filler) => ({
      filler,
      bytes: eventBytes(worstEvent(withBody[0] as Route, filler, 0)),
    }));
    const worst = fillers.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    expect(worst.filler).toBe('host');
    for (const route of withBody) {
      const label = `${routeKey(route)} (${route.body})`;
      const bytes = eventBytes(worstEvent(route, worst.filler, maxBodyBytes));
      expect(bytes, label).toBeLessThanOrEqual(limit);
      expect(bytes, `${label}: the bound request-body.ts computes`).toBeLessThanOrEqual(worstEventBytes(maxBodyBytes));
      // A body that is not text travels base64: 4/3 of its bytes.
      expect(eventBytes(worstEvent(route, worst.filler, maxBodyBytes, true)), `${label}, binary`).toBeLessThan(bytes);
    }
  });

  test('one byte more than maxBodyBytes is our 413 payload_too_large on every route with a body; maxBodyBytes itself passes the size check', async () => {
    const { client, tenantId, token: tenant } = await newTenant();
    const agent = (await defaultAgent(tenantId)).token;
    const tokens = { client: client.token, tenant, agent } as const;
    await each(withBody.length, async (index) => {
      const route = withBody[index] as Route;
      const label = routeKey(route);
      const token = tokens[route.auth[0] as keyof typeof tokens];
      const headers = { 'content-type': 'application/json' };
      const over = await call(route.method, pathOf(route), token, { rawBody: Buffer.alloc(maxBodyBytes + 1, 0x20), headers });
      expect({ status: over.status, code: over.body.code }, label).toEqual({ status: 413, code: 'payload_too_large' });
      expectWithinLimit(over, label);
      const at = await call(route.method, pathOf(route), token, { rawBody: Buffer.alloc(maxBodyBytes, 0x20), headers });
      expect({ status: at.status, code: at.body.code }, `${label} at the bound: parsed, then refused as no JSON`).toEqual({
        status: 400,
        code: 'malformed_json',
      });
    });
  }, 120_000);
});

// --------------------------------------------------------------------------------------------------

worstCase(
  'constant answers (the documents, the documentation page and its files, the key set): measured',
  ['GET /openapi.json', 'GET /docs/{asset}', 'GET /.well-known/jwks.json'],
  async () => {
    const answers: Array<[string, Answer]> = [
      ['GET /openapi.json', await callRoute({ method: 'GET', path: '/openapi.json' })],
      ['GET /docs', await callRoute({ method: 'GET', path: '/docs' })],
      ['GET /.well-known/jwks.json', await callRoute({ method: 'GET', path: '/.well-known/jwks.json' })],
    ];
    for (const asset of Object.keys(docsAssets)) {
      for (const encoding of ['gzip', 'identity']) {
        const headers = { 'accept-encoding': encoding };
        answers.push([`GET /docs/${asset} (${encoding})`, await callRoute({ method: 'GET', path: `/docs/${asset}`, headers })]);
      }
    }
    for (const [label, answer] of answers) expectFits(answer, label);
    // Swagger UI's script, base64 and not compressed, is the largest.
    expect(Math.max(...answers.map(([, answer]) => answer.resultBytes))).toBeGreaterThan(2_000_000);
  },
);

// --------------------------------------------------------------------------------------------------

/**
 * development_variables of exactly `maxDevelopmentVariablesBytes` as the bound measures them (their
 * JSON), of quotes: each takes 2 bytes there and 4 as it travels, the most of any character.
 */
function quoteHeavyVariables(): Record<string, string> {
  const variables: Record<string, string> = {};
  const size = () => Buffer.byteLength(JSON.stringify(variables));
  for (let index = 0; size() < maxDevelopmentVariablesBytes; index++) {
    const name = `${'"'.repeat(120)}${index}`;
    variables[name] = '';
    const room = maxDevelopmentVariablesBytes - size();
    let quotes = Math.floor(room / 2);
    let pad = room % 2;
    if (quotes + pad > 4096) {
      // A full value, leaving room for the next name (some 250 bytes).
      quotes = room - 8192 < 300 ? 3896 : 4096;
      pad = 0;
    }
    variables[name] = '"'.repeat(quotes) + 'x'.repeat(pad);
  }
  expect(size()).toBe(maxDevelopmentVariablesBytes);
  return variables;
}

worstCase(
  'POST /agent/heartbeat: 50 pending runs and development_variables of quotes at their 64 KiB bound: the variables once, every run handed out',
  ['POST /agent/heartbeat', 'GET /tenants/{id}', 'PATCH /tenants/{id}'],
  async () => {
    const { client, tenantId } = await newTenant({ nome: '"'.repeat(200) });
    const variables = quoteHeavyVariables();
    const patched = await call('PATCH', `/tenants/${tenantId}`, client.token, { body: { development_variables: variables } });
    expectFits(patched, 'PATCH /tenants/{id}');
    expect(patched.body.data.development_variables).toEqual(variables);
    expectFits(await call('GET', `/tenants/${tenantId}`, client.token), 'GET /tenants/{id}');

    const agent = await defaultAgent(tenantId);
    // Contexts at the reload schema's bound, of control characters (the schema allows them).
    const context = controls(200);
    const recorded = await each(
      50,
      async (index) => {
        const load = {
          batchId: `batch-${index}`,
          deduplicationId: `bounds-${tenantId}-${index}`,
          tenantId,
          agentId: agent.agentId,
          flowId: index + 1,
          context,
          requestedAt: new Date().toISOString(),
        };
        expect(await recordDispatchedRun(load)).toBe('recorded');
      },
      10,
    );
    expect(recorded).toHaveLength(50);

    const beat = await call('POST', '/agent/heartbeat', agent.token);
    expectFits(beat, 'POST /agent/heartbeat');
    const { data } = beat.body;
    expect(data.runs).toHaveLength(50);
    expect(data.variables).toEqual(variables);
    // Once per answer: no run carries them (50 copies were 6.4 MB as they travel).
    expect(data.runs.filter((run: object) => 'variables' in run)).toEqual([]);
    expect(JSON.stringify(beat.body).split('"variables":').length - 1).toBe(1);
    expect(beat.resultBytes).toBeGreaterThan(2 * maxDevelopmentVariablesBytes);

    // The agent takes them: each leaves the pending list at its first report.
    const handed = data.runs.map((run: { id: number }) => run.id) as number[];
    await each(handed.length, async (index) => {
      const report = await call('POST', `/agent/runs/${handed[index]}`, agent.token, { body: { status: 'running' } });
      expect(report.status).toBe(200);
    });
    const after = await call('POST', '/agent/heartbeat', agent.token);
    expectFits(after, 'POST /agent/heartbeat (nothing pending)');
    expect(after.body.data.runs).toEqual([]);
    expect(after.body.data).not.toHaveProperty('variables');
    expect(new Set(handed).size).toBe(50);
  },
);

worstCase(
  'POST /agent/heartbeat and GET /tenant/runs over runs an earlier version stored with contexts of control characters: cut to what fits, every run once',
  ['GET /tenant/runs', 'GET /tenant/runs/{id}', 'POST /agent/runs/{id}'],
  async () => {
    const { tenantId, token } = await newTenant({ development_variables: { region: 'eu' } });
    const agent = await defaultAgent(tenantId);
    const count = 30;
    await each(count, async (index) => {
      const load = {
        batchId: `batch-${index}`,
        deduplicationId: `bounds-dense-${tenantId}-${index}`,
        tenantId,
        agentId: agent.agentId,
        flowId: index + 1,
        context: denseText,
        requestedAt: new Date().toISOString(),
      };
      expect(await recordDispatchedRun(load)).toBe('recorded');
    });

    const runs = await readAllPages('/tenant/runs', token);
    expect(runs.items).toHaveLength(count);
    expectDynamoPageOverLimit(runs.items, denseStored);
    const ids = runs.items.map((run) => run.id as number);
    expectEachOnce(runs.items, ids);
    // Newest first, across the pages.
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(runs.sizes.length).toBeGreaterThan(1);
    // Filtered (every run is the default agent's), as the whole list; and one alone.
    const filtered = await readAllPages(`/tenant/runs?agent=${agent.agentId}`, token);
    expect(filtered.items.map((run) => run.id)).toEqual(ids);
    expect(filtered.sizes.length).toBeGreaterThan(1);
    expectFits(await call('GET', `/tenant/runs/${ids[0]}`, token), 'GET /tenant/runs/{id}');

    // Beat after beat, each answer within the limit, until every run was handed out.
    const handed: number[] = [];
    for (let beat = 1; handed.length < count; beat++) {
      const answer = await call('POST', '/agent/heartbeat', agent.token);
      expectFits(answer, `POST /agent/heartbeat (beat ${beat})`);
      const taken = answer.body.data.runs.map((run: { id: number }) => run.id) as number[];
      expect(taken.length, `beat ${beat} hands out some runs`).toBeGreaterThan(0);
      if (beat === 1) expect(taken.length, 'the first beat is cut').toBeLessThan(count);
      expect(answer.body.data.variables).toEqual({ region: 'eu' });
      handed.push(...taken);
      // Each leaves the pending list at its first report, which answers the run (its context too).
      await each(taken.length, async (index) => {
        const report = await call('POST', `/agent/runs/${taken[index]}`, agent.token, { body: { status: 'running' } });
        expectFits(report, 'POST /agent/runs/{id}');
      });
      if (beat > count) throw new Error('The beats do not hand every run out');
    }
    expect([...handed].sort()).toEqual([...ids].sort());
    const last = await call('POST', '/agent/heartbeat', agent.token);
    expect(last.body.data.runs).toEqual([]);
  },
);

// --------------------------------------------------------------------------------------------------

/** An alert as an earlier version stored it: one text block of `text`, written straight through the repository. */
async function storeAlert(tenantId: number, text: string): Promise<number> {
  const alertId = await allocateAlertId(tenantId);
  const now = new Date().toISOString();
  const record: AlertRecord = {
    tenantId,
    alertId,
    nome: `Legacy ${alertId}`,
    channels: { webhook: false },
    content: [{ type: 'text', nome: 'Body', generated: { text } }],
    createdAt: now,
    updatedAt: now,
  };
  expect(await insertAlert(record, [], 1_000)).toBe(true);
  return alertId;
}

/**
 * A text of `character` making an alert's content (one block named Body) exactly maxAlertContentBytes
 * as JSON, the bound the check measures: control characters are what the check of earlier versions
 * let through (6 bytes each there, 7 as they travel), quotes the worst the rules take now (2 and 4).
 */
function textAtContentBound(character: '\u0001' | '"'): string {
  const json = (text: string) => Buffer.byteLength(JSON.stringify([{ type: 'text', nome: 'Body', generated: { text } }]));
  const text = character.repeat(Math.floor((maxAlertContentBytes - json('')) / (json(character) - json(''))));
  return text + 'x'.repeat(maxAlertContentBytes - json(text));
}

worstCase(
  'GET /tenant/alerts over 24 alerts whose text blocks hold control characters at the content bound (written before the rule), two at the item bound and eight of quotes: every page fits, each alert read once',
  ['GET /tenant/alerts', 'GET /tenant/alerts/{id}', 'PATCH /tenant/alerts/{id}'],
  async () => {
    const { tenantId, token } = await newTenant();
    const legacy = textAtContentBound('\u0001');
    // The item bound: DynamoDB's 400 KB, less the item's other attributes.
    const itemBound = controls(dynamoItemBytes - 2_048);
    const quotes = textAtContentBound('"');
    const ids = await each(24, () => storeAlert(tenantId, legacy));
    const heavy = [await storeAlert(tenantId, itemBound), await storeAlert(tenantId, itemBound)];
    ids.push(...heavy);
    // Written through the route: quotes are the worst text the rules take now.
    const created = await each(8, async () => {
      const body = {
        nome: '"'.repeat(200),
        channels: { webhook: false },
        content: [{ type: 'text', nome: 'Body', generated: { text: quotes } }],
      };
      const answer = await call('POST', '/tenant/alerts', token, { body });
      expect(answer.status).toBe(201);
      expectWithinLimit(answer, 'POST /tenant/alerts');
      return answer.body.data.id as number;
    });
    ids.push(...created);

    const pages = await readAllPages('/tenant/alerts', token);
    expectEachOnce(pages.items, ids);
    expectDynamoPageOverLimit(pages.items, Math.ceil(maxAlertContentBytes / 6) + 1_000);
    // Their order is the alerts' ids, across the pages.
    const read = pages.items.map((alert) => alert.id as number);
    expect(read).toEqual([...read].sort((a, b) => a - b));
    expectEachOnce((await readAllPages('/tenant/alerts?limit=100', token)).items, ids);

    for (const alertId of heavy) {
      const one = await call('GET', `/tenant/alerts/${alertId}`, token);
      expectFits(one, 'GET /tenant/alerts/{id}');
      expect(one.resultBytes).toBeGreaterThan(6 * (dynamoItemBytes - 4_096));
      const renamed = await call('PATCH', `/tenant/alerts/${alertId}`, token, { body: { nome: '"'.repeat(200) } });
      expectFits(renamed, 'PATCH /tenant/alerts/{id}');
      // The preview of an alert that brings no content is its definitions: the stored text.
      const preview = await call('POST', `/tenant/alerts/${alertId}/preview`, token, { body: { user: { id: 1 } } });
      expectFits(preview, 'POST /tenant/alerts/{id}/preview (the definitions)');
    }
  },
);

worstCase(
  'POST /tenant/alerts/{id}/preview with the largest body the route takes, of quotes: the answer fits; one byte more is our 413',
  ['POST /tenant/alerts/{id}/preview'],
  async () => {
    const { token } = await newTenant();
    const alert = await call('POST', '/tenant/alerts', token, {
      body: { nome: '"'.repeat(200), channels: { webhook: false }, content: [{ type: 'text', nome: 'Body' }] },
    });
    expect(alert.status).toBe(201);
    const path = `/tenant/alerts/${alert.body.data.id}/preview`;
    const body = (text: string) => ({
      user: { id: '"'.repeat(128), email: controls(320) },
      content: [{ type: 'text', nome: '"'.repeat(200), generated: { text } }],
    });
    const overhead = Buffer.byteLength(JSON.stringify(body('')));
    const text = '"'.repeat(Math.floor((maxBodyBytes - overhead) / 2));
    const largest = Buffer.from(JSON.stringify(body(text + 'x'.repeat(maxBodyBytes - overhead - 2 * text.length))));
    expect(largest.length).toBe(maxBodyBytes);
    const headers = { 'content-type': 'application/json' };
    const answer = await call('POST', path, token, { rawBody: largest, headers });
    expectFits(answer, 'POST /tenant/alerts/{id}/preview');
    // The request echoed: twice its bytes as it travels, and still a third of the limit.
    expect(answer.resultBytes).toBeGreaterThan(2 * maxBodyBytes - 10_000);
    const over = await call('POST', path, token, { rawBody: Buffer.concat([largest, Buffer.from(' ')]), headers });
    expect({ status: over.status, code: over.body.code }).toEqual({ status: 413, code: 'payload_too_large' });
  },
);

/**
 * An owner's deliveries whose attempts' errors hold control characters, read as its routes list them
 * and show one: a tenant's alert deliveries, a client's event deliveries (the same records but for
 * the owner and what the delivery is of).
 */
async function deliveriesAtTheirWorst(
  owner: WebhookOwner,
  of: Pick<AlertDeliveryRecord, 'tenantId' | 'alertId' | 'trigger'> | Pick<EventDeliveryRecord, 'clientId' | 'type'>,
  list: { paths: readonly string[]; one: (id: number) => string; token: string },
) {
  const now = new Date();
  const store = async (errors: readonly string[]) => {
    const [deliveryId] = (await allocateDeliveryIds(owner, 1)) as [number];
    const record = {
      ...of,
      deliveryId,
      webhookId: `msg_${crypto.randomUUID().replaceAll('-', '')}`,
      status: 'failed',
      bytes: 100,
      attempts: errors.map((error, index) => ({
        at: new Date(now.getTime() + index).toISOString(),
        url: `https://hooks.example.com/${'"'.repeat(200)}`,
        durationMs: 10_000,
        error,
      })),
      roundStart: 0,
      failureReason: controls(500),
      createdAt: now.toISOString(),
      expiresAt: Math.floor(now.getTime() / 1000) + 86_400,
    } as DeliveryRecord;
    await insertDelivery(record, undefined, []);
    return deliveryId;
  };
  // Ten attempts of 5,000 control characters each: 50 KB a delivery.
  const ids = await each(26, () => store(Array.from({ length: 10 }, () => controls(5_000))));
  // And one at the item bound.
  const heavy = await store(Array.from({ length: 20 }, () => controls((dynamoItemBytes - 12_000) / 20)));
  ids.push(heavy);

  // Each list of them, filtered ones too (every delivery here has failed).
  for (const path of list.paths) {
    const pages = await readAllPages(path, list.token);
    expectEachOnce(pages.items, ids);
    expectDynamoPageOverLimit(
      pages.items.filter((delivery) => delivery.id !== heavy),
      54_000,
    );
    const read = pages.items.map((delivery) => delivery.id as number);
    expect(read, `${path}: newest first`).toEqual([...read].sort((a, b) => b - a));
  }
  const one = await call('GET', list.one(heavy), list.token);
  expectFits(one, list.one(heavy));
  expect(one.resultBytes).toBeGreaterThan(6 * (dynamoItemBytes - 16_000));
}

worstCase(
  "GET /tenant/alerts/{id}/deliveries, GET /tenant/deliveries and GET /tenant/deliveries/{id} over deliveries whose attempts' errors hold control characters",
  ['GET /tenant/alerts/{id}/deliveries', 'GET /tenant/deliveries', 'GET /tenant/deliveries/{id}'],
  async () => {
    const { tenantId, token } = await newTenant();
    const alert = await call('POST', '/tenant/alerts', token, {
      body: { nome: 'Deliveries', channels: { webhook: true }, content: [{ type: 'text', nome: 'Body' }] },
    });
    const alertId = alert.body.data.id as number;
    await deliveriesAtTheirWorst(
      tenantOwner(tenantId),
      { tenantId, alertId, trigger: 'fire' },
      {
        paths: [`/tenant/alerts/${alertId}/deliveries`, '/tenant/deliveries', '/tenant/deliveries?status=failed'],
        one: (id) => `/tenant/deliveries/${id}`,
        token,
      },
    );
  },
);

worstCase(
  "GET /tenants/deliveries and GET /tenants/deliveries/{id} over event deliveries whose attempts' errors hold control characters",
  ['GET /tenants/deliveries', 'GET /tenants/deliveries/{id}'],
  async () => {
    const { clientId, token } = await newClient();
    await deliveriesAtTheirWorst(
      clientOwner(clientId),
      { clientId, type: 'run.failed' },
      { paths: ['/tenants/deliveries', '/tenants/deliveries?status=failed'], one: (id) => `/tenants/deliveries/${id}`, token },
    );
  },
);

// --------------------------------------------------------------------------------------------------

worstCase(
  'GET /tenants over tenants whose names an earlier version stored with control characters, and tenants named at the bound',
  ['GET /tenants'],
  async () => {
    const client = await newClient();
    const named = await each(4, async () => {
      const created = await call('POST', '/tenants', client.token, { body: { nome: '"'.repeat(200), ativo: false } });
      expect(created.status).toBe(201);
      return created.body.data.id as number;
    });
    const legacy = await each(24, () => allocateTenantId());
    const now = new Date().toISOString();
    await putAll(
      legacy.map((tenantId) => ({
        ...stored.tenant.key({ tenantId }),
        ...stored.tenant.indexEntry({ clientId: client.clientId, tenantId }),
        tenantId,
        clientId: client.clientId,
        nome: denseText,
        ativo: false,
        dominio: `legacy-${tenantId}.localhost`,
        developmentVariables: {},
        tokenHash: `legacy-${tenantId}`,
        createdAt: now,
        updatedAt: now,
      })),
    );
    // The whole list, and filtered (every one of them is inactive).
    for (const path of ['/tenants', '/tenants?ativo=false']) {
      const pages = await readAllPages(path, client.token);
      expectEachOnce(pages.items, [...named, ...legacy]);
      expectDynamoPageOverLimit(
        pages.items.filter((tenant) => legacy.includes(tenant.id as number)),
        denseStored,
      );
    }
    expectFits(await call('GET', `/tenants/${legacy[0]}`, client.token), 'GET /tenants/{id} (a legacy name)');
  },
);

worstCase(
  'GET /tenant/schedules and GET /tenant/schedules/{id}/runs over schedules and fires an earlier version stored with control characters',
  ['GET /tenant/schedules', 'GET /tenant/schedules/{id}/runs'],
  async () => {
    const { tenantId, token } = await newTenant();
    const at = '2026-01-01T00:00:00.000Z';
    const file = (scheduleId: number, labels: Record<string, string>): ScheduleFile => ({
      header: { id: scheduleId, labels },
      body: {
        nome: `Legacy ${scheduleId}`,
        ativo: false,
        timezone: 'UTC',
        flows: [],
        triggers: [],
        version: 1,
        createdAt: at,
        createdBy: `tenant:${tenantId}`,
        updatedAt: at,
        updatedBy: `tenant:${tenantId}`,
      },
    });
    const scheduleIds = Array.from({ length: 26 }, (_, index) => index + 1);
    await putAll(
      scheduleIds.map((scheduleId) =>
        scheduleItem({
          tenantId,
          scheduleId,
          file: file(scheduleId, { notes: denseText }),
          version: 1,
          minuteTriggers: false,
        }),
      ),
    );
    const schedules = await readAllPages('/tenant/schedules', token);
    expectEachOnce(schedules.items, scheduleIds);
    expectDynamoPageOverLimit(schedules.items, denseStored);

    // Fires of the first schedule, each with a flow whose context and an error of control characters.
    const slots = Array.from({ length: 26 }, (_, index) => new Date(Date.UTC(2026, 0, 1, index)).toISOString());
    const runs: ScheduleRunRecord[] = slots.map((slot) => ({
      tenantId,
      scheduleId: 1,
      slot,
      slotLocal: slot,
      firedAt: slot,
      scheduleVersion: 1,
      status: 'failed',
      flows: [{ flowId: 1, context: controls(200), status: 'failed' }],
      error: denseText,
      expiresAt: Math.floor(Date.now() / 1000) + 86_400,
    }));
    await putRuns(runs);
    const fires = await readAllPages('/tenant/schedules/1/runs', token);
    expectEachOnce(fires.items, slots, 'slot');
    expectDynamoPageOverLimit(fires.items, denseStored);
    expect(fires.items.map((fire) => fire.slot)).toEqual([...slots].reverse());
  },
);

// --------------------------------------------------------------------------------------------------
// Worst cases that once did not fit: the tenant limits now count resources as an answer carries them
// (resourceBytes), a body as the JSON it parses to, and a schedule as stored and as YAML.

worstCase(
  'GET /tenant with applications at the tenant limits (5 MB of resources as an answer carries them), named and routed with quotes',
  ['GET /tenant'],
  async () => {
    const { tenantId, token } = await newTenant();
    const application = (id: number): StoredResource => ({
      tenantId,
      id,
      key: `a${id}`.padEnd(64, '-'),
      nome: '"'.repeat(200),
      templateId: 1,
      changedInVersion: 1,
      type: 'application',
      route: `/${'"'.repeat(499)}`,
    });
    const each_ = resourceBytes(application(99_999));
    const count = Math.min(tenantLimits.resources, Math.floor(tenantLimits.bytes / each_));
    await writeResources(Array.from({ length: count }, (_, index) => application(index + 1)));
    const own = await call('GET', '/tenant', token);
    expectWithinLimit(own, 'GET /tenant');
    expectFits(own, `GET /tenant (${count} applications, ${count * each_} bytes as an answer carries them)`);
  },
);

worstCase(
  'GET /tenants/templates/{id} after publishing a YAML template whose aliases repeat a table of 500 columns',
  ['GET /tenants/templates/{id}'],
  async () => {
    const client = await newClient();
    const columns = Array.from(
      { length: 500 },
      (_, index) => `{column_name: c${index}, data_type: "${'\\x01'.repeat(64)}", label: "${'\\"'.repeat(200)}"}`,
    ).join(', ');
    const tables = Array.from({ length: 20 }, (_, index) => `{key: t${index}, nome: T, desk: d, columns: *columns}`);
    const yaml =
      `{nome: "Aliases ${crypto.randomUUID()}", desks: [{key: d, nome: D}], tables: [` +
      `{key: t, nome: T, desk: d, columns: &columns [${columns}]}, ${tables.join(', ')}]}`;
    expect(Buffer.byteLength(yaml)).toBeLessThan(maxBodyBytes / 2);
    const published = await call('POST', '/tenants/templates', client.token, {
      rawBody: yaml,
      headers: { 'content-type': 'application/yaml' },
    });
    expectWithinLimit(published, 'POST /tenants/templates');
    // Refused: the aliases make it larger than the body bound as the JSON it parses to.
    expect({ status: published.status, code: published.body.code }).toEqual({ status: 413, code: 'payload_too_large' });
    if (published.status !== 201) return;
    const read = await call('GET', `/tenants/templates/${published.body.data.id}`, client.token);
    expectWithinLimit(read, 'GET /tenants/templates/{id}');
    expectFits(read, `GET /tenants/templates/{id} (a ${Buffer.byteLength(yaml)}-byte YAML body)`);
  },
);

worstCase(
  'POST /tenants/templates/{id}/rollouts: a dry run over 10 tenants of a version of 1,000 flows whose contexts are quotes, and the rollout itself',
  ['POST /tenants/templates/{id}/rollouts'],
  async () => {
    const client = await newClient();
    const first = { nome: `Fleet ${crypto.randomUUID()}`, desks: [{ key: 'd', nome: 'D' }] };
    const published = await call('POST', '/tenants/templates', client.token, { body: first });
    expect(published.status).toBe(201);
    const templateId = published.body.data.id as number;
    await each(10, async (index) => {
      const created = await call('POST', '/tenants', client.token, { body: { nome: `T${index}`, ativo: true, templateId } });
      expect(created.status).toBe(201);
    });
    // Each tenant's plan would hold every new flow: its key, and its context of quotes (4 bytes each as they travel).
    const context: number = schema('template-bundle').$defs.flow.properties.context.maxLength;
    const second = {
      ...first,
      connections: [{ key: 'c', nome: 'C', kind: 'postgres' }],
      tables: Array.from({ length: 1000 }, (_, index) => ({
        key: `t${index}`,
        nome: 'T',
        desk: 'd',
        columns: [{ column_name: 'id', data_type: 'integer', label: 'Id' }],
      })),
      flows: Array.from({ length: 1000 }, (_, index) => ({
        key: `f${index}`,
        nome: 'F',
        connection: 'c',
        writes: [`t${index}`],
        context: '"'.repeat(context),
      })),
    };
    const next = await call('PUT', `/tenants/templates/${templateId}`, client.token, { body: second });
    expect(next.status).toBe(200);
    const started = await call('POST', `/tenants/templates/${templateId}/rollouts`, client.token, { body: { tenants: 'all' } });
    expectWithinLimit(started, 'POST /tenants/templates/{id}/rollouts (the rollout)');
    expect(started.status).toBe(202);
    const dry = await call('POST', `/tenants/templates/${templateId}/rollouts`, client.token, {
      body: { tenants: 'all', dryRun: true },
    });
    expectWithinLimit(dry, 'POST /tenants/templates/{id}/rollouts (a dry run)');
    expectFits(dry, 'POST /tenants/templates/{id}/rollouts (a dry run of 10 tenants)');
    // It describes the tenants that fit, and says when there are more.
    expect(dry.body.data.truncated).toBe(dry.body.data.tenants.length < 10);
  },
);

worstCase(
  'GET /tenant/datamart/{id} and GET /tenant/datamart after a later apply widens its tables to 500 columns of the worst labels and types, to the tenant limits',
  ['GET /tenant/datamart/{id}', 'GET /tenant/datamart'],
  async () => {
    const { tenantId, token } = await newTenant();
    const table = (id: number, columns: number): StoredResource => ({
      tenantId,
      id,
      key: `t${id}`,
      nome: `T${id}`,
      templateId: 1,
      changedInVersion: columns === 1 ? 1 : 2,
      type: 'table',
      deskKey: 'd',
      columns: Array.from({ length: columns }, (_, index) => ({
        id: id * 1_000 + index,
        column_name: `c${index}`.padEnd(63, '_'),
        data_type: controls(64),
        label: '"'.repeat(200),
      })),
    });
    const tableIds = Array.from({ length: 10 }, (_, index) => index + 1);
    await writeResources(tableIds.map((id) => table(id, 1)));
    const created = await call('POST', '/tenant/datamart', token, { body: { nome: 'Wide', tables: tableIds, owners: [] } });
    expect(created.status).toBe(201);
    // What another template's version applies to the same tables, as many as the tenant limits let widen (their
    // bytes as an answer carries them, which any view of a datamart, listing each table once, stays within).
    const widened = Math.min(tableIds.length, Math.floor((tenantLimits.bytes - 10 * 1024) / resourceBytes(table(1, 500))));
    expect(widened).toBeGreaterThan(2);
    const wide = tableIds.slice(0, widened).map((id) => table(id, 500));
    await writeResources(wide);
    const one = await call('GET', `/tenant/datamart/${created.body.data.id}`, token);
    expectWithinLimit(one, 'GET /tenant/datamart/{id}');
    const pages = await call('GET', '/tenant/datamart?limit=1', token);
    expectWithinLimit(pages, 'GET /tenant/datamart?limit=1');
    expectFits(pages, 'GET /tenant/datamart?limit=1');
    expectFits(one, 'GET /tenant/datamart/{id}');
  },
);

worstCase(
  'PUT and GET /tenant/schedules/{id} as YAML: a file the route takes, an extra property holding 120,000 short lines 30 levels deep',
  ['PUT /tenant/schedules/{id}', 'GET /tenant/schedules/{id}'],
  async () => {
    const { token } = await newTenant();
    // YAML writes a multi-line string as a block, each line indented as deep as the string is nested:
    // 2 bytes stored, 64 as the YAML answer carries them.
    let nested: unknown = 'a\n'.repeat(120_000);
    for (let depth = 0; depth < 29; depth++) nested = { a: nested };
    const file = { header: { id: 7 }, body: { nome: 'Deep', ativo: false, timezone: 'UTC', flows: [], triggers: [], x: nested } };
    expect(Buffer.byteLength(JSON.stringify(file))).toBeLessThan(maxBodyBytes / 2);
    const yaml = { accept: 'application/yaml' };
    const put = await call('PUT', '/tenant/schedules/7', token, { body: file, headers: yaml });
    expectWithinLimit(put, 'PUT /tenant/schedules/{id}');
    // Refused before anything is written: over a megabyte as YAML.
    expect({ status: put.status, code: put.body.code }).toEqual({ status: 413, code: 'payload_too_large' });
    const json = await call('GET', '/tenant/schedules/7', token);
    // A file the route refuses is fine (nothing stored); one it stores must be answered, and read back.
    if (json.status === 404) {
      expect(put.status).toBeGreaterThanOrEqual(400);
      return;
    }
    expectFits(json, 'GET /tenant/schedules/{id} (JSON)');
    const read = await call('GET', '/tenant/schedules/7', token, { headers: yaml });
    expectWithinLimit(read, 'GET /tenant/schedules/{id}');
    expectFits(
      { ...put, status: put.status === 201 ? 200 : put.status },
      'PUT /tenant/schedules/{id} (stored, answered as YAML)',
    );
    expectFits(read, 'GET /tenant/schedules/{id} (YAML)');
  },
);
