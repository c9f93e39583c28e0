/**
 * What the items that grow with use weigh in DynamoDB: each one's size by DynamoDB's rules (what a
 * write and a read are billed on), and the storage it is billed for (100 bytes of overhead per item,
 * and again per index entry). Built from the records' own types and entity declarations, with the values of
 * a reference tenant (about 1 KB of development variables, 2 flows per schedule, a 1 KB alert
 * body). docs/operations.md, section Cost and storage, uses these numbers.
 * `npm run bench -- sizes` prints them; no twin is started.
 */
import type { AgentRecord } from '#functions/core/agents/agent-repository.ts';
import type { Attempt, AlertDeliveryRecord } from '#functions/core/alerts/alert-repository.ts';
import { maxAttemptsPerDelivery, maxResponseBodyBytes } from '#functions/core/alerts/webhook-config.ts';
import type { RunRecord } from '#functions/core/reload/run-repository.ts';
import { maxCallerRequestIdLength } from '#functions/core/api/request-id.ts';
import type { ScheduleRunRecord } from '#functions/core/schedules/schedule-repository.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { expiresAt } from '#functions/core/store/retention.ts';
import type { TenantRecord } from '#functions/core/tenants/tenant-repository.ts';
import { maxDevelopmentVariablesBytes } from '#functions/core/tenants/tenants.ts';
import { markdownTable } from './table.ts';

/** DynamoDB's per-item storage overhead (bytes), billed for the item and for each index entry. */
export const storageOverheadBytes = 100;

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

/** A value's size as DynamoDB counts it (Developer Guide, "DynamoDB item sizes and formats"), name excluded. */
function valueBytes(value: unknown): number {
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return utf8(value);
  if (typeof value === 'number') {
    const digits = String(Math.abs(value)).replace('.', '').replace(/^0+/, '').replace(/0+$/, '').length;
    return Math.ceil(Math.max(digits, 1) / 2) + 1;
  }
  // A list or map: 3 bytes, and 1 per element.
  const entries = Array.isArray(value) ? value.map((element) => ['', element] as const) : Object.entries(value as object);
  const defined = entries.filter(([, element]) => element !== undefined);
  return 3 + defined.reduce((sum, [name, element]) => sum + utf8(name) + valueBytes(element) + 1, 0);
}

/** An item's size: its attribute names and values (undefined attributes are not written). */
export function itemBytes(item: Record<string, unknown>): number {
  return Object.entries(item)
    .filter(([, value]) => value !== undefined)
    .reduce((sum, [name, value]) => sum + utf8(name) + valueBytes(value), 0);
}

const tenantId = 1000;
const now = Date.parse('2026-01-15T08:00:00.000Z');
const iso = new Date(now).toISOString();

/** Development variables whose JSON is about `bytes` long. */
function variablesOf(bytes: number): Record<string, string> {
  const variables: Record<string, string> = {};
  for (let index = 0; utf8(JSON.stringify(variables)) < bytes - 60; index++)
    variables[`VARIABLE_${String(index).padStart(3, '0')}`] = `value-${index}.tenant-${tenantId}.internal.example`;
  return variables;
}

const tenant = (variables: Record<string, string>): TenantRecord => ({
  tenantId,
  clientId: 7,
  nome: 'Acme Distribuição Ltda',
  ativo: true,
  dominio: `acme-distribuicao-ltda-${tenantId}.bi.example.com`,
  developmentVariables: variables,
  templateId: 3,
  appliedTemplate: { templateId: 3, version: 4, appliedAt: iso },
  tokenHash: 'x'.repeat(43),
  createdAt: iso,
  updatedAt: iso,
});

const run: RunRecord = {
  runId: 123_456,
  tenantId,
  agentId: 1,
  flowId: 42,
  context: 'incremental',
  batchId: `schedule-${tenantId}-17-29468640`,
  status: 'dispatched',
  createdAt: iso,
  updatedAt: iso,
  expiresAt: expiresAt('runRetentionDays', now),
};

const scheduleRun: ScheduleRunRecord = {
  tenantId,
  scheduleId: 17,
  slot: iso,
  slotLocal: '2026-01-15T05:00:00-03:00',
  firedAt: iso,
  scheduleVersion: 2,
  status: 'fired',
  flows: [
    { flowId: 42, context: 'incremental', tokenId: 1, status: 'enqueued' },
    { flowId: 43, context: 'full', tokenId: 1, status: 'enqueued' },
  ],
  expiresAt: expiresAt('runRetentionDays', now),
};

const timedOut: Attempt = {
  at: iso,
  url: 'https://hooks.example.com/bi/alerts',
  durationMs: 10_000,
  error: 'timed out after 10 s',
};

const delivery = (attempts: number, attempt = timedOut): AlertDeliveryRecord => ({
  tenantId,
  deliveryId: 98_765,
  alertId: 12,
  webhookId: `msg_${'0'.repeat(32)}`,
  trigger: 'fire',
  status: attempts === 0 ? 'queued' : 'failed',
  bytes: 1024,
  attempts: Array.from({ length: attempts }, () => attempt),
  roundStart: 0,
  // The longest X-Request-Id a request may give it.
  requestId: 'x'.repeat(maxCallerRequestIdLength),
  createdAt: iso,
  expiresAt: expiresAt('deliveryRetentionDays', now),
});

const agent: AgentRecord = {
  agentId: 1,
  tenantId,
  clientId: 7,
  nome: 'default',
  isDefault: true,
  tokenHash: 'x'.repeat(43),
  createdAt: iso,
  lastSeenAt: iso,
};

export interface ItemSize {
  item: string;
  /** What a read or write of it is billed on. */
  bytes: number;
  /** Index entries it has (each stores the item again, projected whole). */
  indexEntries: number;
  /** Storage billed: item and index entries, each with its overhead. */
  storedBytes: number;
}

function sized(item: string, record: Record<string, unknown>): ItemSize {
  const bytes = itemBytes(record);
  const indexEntries = record.gsi1pk === undefined ? 0 : 1;
  return { item, bytes, indexEntries, storedBytes: (bytes + storageOverheadBytes) * (1 + indexEntries) };
}

/** The largest a delivery's item gets: every attempt it keeps, each to a 2,048-character URL with a 1 KB answer. */
export const largestDeliveryItem = `delivery at its ${maxAttemptsPerDelivery} attempts (2,048-character URL, 1 KB answer each)`;

export function itemSizes(): ItemSize[] {
  const typical = variablesOf(1024);
  const largest = variablesOf(maxDevelopmentVariablesBytes);
  const pendingRun = { ...run, ...stored.run.key(run), ...stored.run.indexEntry(run) };
  const deliveryKeys = { ...stored.delivery.key(delivery(0)), ...stored.delivery.indexEntry(delivery(0)) };
  return [
    sized(`tenant (${Object.keys(typical).length} development variables, ~1 KB)`, {
      ...tenant(typical),
      ...stored.tenant.key({ tenantId }),
      ...stored.tenant.indexEntry({ clientId: 7, tenantId }),
    }),
    sized('tenant (variables at the 64 KiB cap)', {
      ...tenant(largest),
      ...stored.tenant.key({ tenantId }),
      ...stored.tenant.indexEntry({ clientId: 7, tenantId }),
    }),
    sized('run, pending (on its agent’s index)', pendingRun),
    sized('run, taken (off the index)', { ...run, ...stored.run.key(run) }),
    sized('run as written before (copying ~1 KB of variables)', { ...pendingRun, variables: typical }),
    sized('run as written before (variables at the cap)', { ...pendingRun, variables: largest }),
    sized('schedule run (2 flows)', { ...scheduleRun, ...stored.scheduleRun.key(scheduleRun) }),
    sized('delivery, queued', { ...delivery(0), ...deliveryKeys }),
    sized('delivery, failed after 8 attempts', { ...delivery(8), ...deliveryKeys }),
    sized('delivery, delivered at the first attempt (the receiver answering {"ok":true})', {
      ...delivery(1, { at: iso, url: timedOut.url, durationMs: 120, statusCode: 200, responseBody: '{"ok":true}' }),
      status: 'delivered',
      ...deliveryKeys,
    }),
    sized(largestDeliveryItem, {
      ...delivery(maxAttemptsPerDelivery, {
        at: iso,
        url: `https://hooks.example.com/${'x'.repeat(2048 - 26)}`,
        durationMs: 10_999,
        statusCode: 503,
        responseBody: '\u00e9'.repeat(maxResponseBodyBytes / 2),
      }),
      failureReason: `A delivery makes at most ${maxAttemptsPerDelivery} attempts; this one has made them`,
      ...deliveryKeys,
    }),
    sized('delivery body (1 KB alert, inline)', {
      ...stored.deliveryBody.key({ tenantId, deliveryId: 98_765 }),
      body: 'x'.repeat(1024),
      expiresAt: expiresAt('deliveryRetentionDays', now),
    }),
    sized('agent (each heartbeat rewrites it)', { ...agent, ...stored.agent.key(agent) }),
  ];
}

/** The table printed by `npm run bench -- sizes`. */
export function itemSizeSection(): string {
  return [
    '## Item sizes',
    'By DynamoDB’s rules, for the reference tenant (bench/item-sizes.ts). A write costs 1 WRU per started KB of the item (twice in a transaction), a strongly consistent read 1 RRU per started 4 KB; storage adds 100 bytes per item and per index entry (gsi1 projects items whole).',
    markdownTable(
      ['item', 'bytes', 'WRU per write', 'index entries', 'stored bytes'],
      itemSizes().map(({ item, bytes, indexEntries, storedBytes }) => [
        item,
        bytes,
        Math.ceil(bytes / 1024),
        indexEntries,
        storedBytes,
      ]),
    ),
  ].join('\n\n');
}
