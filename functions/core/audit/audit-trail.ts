import type { AuditResource } from '#functions/routes.ts';
import { getItem, mapPage, type Page, queryFilteredPage, queryPage } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { findTenant, tenantNotFound } from '#functions/core/tenants/tenant-repository.ts';
import {
  type AuditActor,
  type AuditRecord,
  auditRecordOf,
  type ChainId,
  chainItems,
  chainName,
  firstPrevHash,
  recordHash,
} from './audit-record.ts';

/**
 * Reading the audit trail: a tenant's chain or one of its agents' (`GET /tenant/audit`), a client's
 * chain with its tenants' (`GET /tenants/audit`, one Query of the index by time, or one agent's
 * chain), and a chain checked link by link (`npm run admin -- audit verify`).
 */

/** The filters of the audit routes, each optional. `from` and `to` are ISO instants, both included. */
export interface AuditFilter {
  resource?: AuditResource;
  resourceId?: string;
  actor?: AuditActor['kind'];
  from?: string;
  to?: string;
  /** `GET /tenants/audit` only: the records of one tenant's chain. */
  tenantId?: number;
}

type StoredRecord = AuditRecord & Record<string, unknown>;

/** Whether a record passes the filters the Query's key condition did not already apply. */
const passes = (filter: AuditFilter) => (item: StoredRecord) =>
  (filter.resource === undefined || item.resource.type === filter.resource) &&
  (filter.resourceId === undefined || item.resource.id === filter.resourceId) &&
  (filter.actor === undefined || item.actor.kind === filter.actor) &&
  (filter.from === undefined || item.at >= filter.from) &&
  (filter.to === undefined || item.at <= filter.to) &&
  (filter.tenantId === undefined || item.chain === chainName({ owner: 'tenant', ownerId: filter.tenantId }));

const filtered = (filter: AuditFilter) => Object.values(filter).some((value) => value !== undefined);

async function readPage(
  query: { index?: 'gsi1'; partition: string; prefix?: string },
  filter: AuditFilter,
  limit: number,
  cursor: string | undefined,
): Promise<Page<AuditRecord>> {
  const options = { ...query, cursor, limit, newestFirst: true };
  const page = filtered(filter)
    ? await queryFilteredPage<StoredRecord>({ ...options, keep: passes(filter) })
    : await queryPage<StoredRecord>(options);
  return mapPage(page, auditRecordOf);
}

/**
 * A tenant's records, newest first: its own changes and its client's on it; or, with `agentId`,
 * that agent's chain (its run reports).
 */
export function listTenantAudit(
  tenantId: number,
  agentId: number | undefined,
  filter: AuditFilter,
  limit: number,
  cursor: string | undefined,
) {
  const chain: ChainId =
    agentId === undefined ? { owner: 'tenant', ownerId: tenantId } : { owner: 'agent', ownerId: agentId, tenantId };
  const { partition, recordPrefix } = chainItems(chain);
  return readPage({ partition, prefix: recordPrefix }, filter, limit, cursor);
}

/** A client's records and its tenants', newest first, by time (the index's sort key starts with the instant). */
export function listClientAudit(clientId: number, filter: AuditFilter, limit: number, cursor: string | undefined) {
  return readPage({ index: 'gsi1', partition: stored.auditRecord.indexes.gsi1.partition({ clientId }) }, filter, limit, cursor);
}

/**
 * An agent's chain as its tenant's client reads it: another client's tenant, or none, is 404; a
 * deleted tenant's stays readable, as its records do until they expire.
 */
export async function listClientAgentAudit(
  clientId: number,
  tenantId: number,
  agentId: number,
  filter: AuditFilter,
  limit: number,
  cursor: string | undefined,
) {
  const tenant = await findTenant(tenantId);
  if (tenant?.clientId !== clientId) throw tenantNotFound();
  return listTenantAudit(tenantId, agentId, filter, limit, cursor);
}

/** One record per line, as `Accept: application/x-ndjson` answers a page. */
export const ndjsonOf = (records: readonly AuditRecord[]) => records.map((record) => `${JSON.stringify(record)}\n`).join('');

/** What `verifyChain` found. */
export interface ChainVerdict {
  chain: string;
  /** Records read, oldest kept first. */
  records: number;
  /** The oldest record kept (older ones expired): its `prevHash` is taken on trust. */
  firstSeq?: number;
  /** Its `prevHash`, as the record says: the hash of the record before it, which retention removed. */
  trustedPrevHash?: string;
  /** The head's `seq`: the newest record written. */
  headSeq: number;
  /** The first link that fails, if any. */
  broken?: { seq: number; reason: string };
}

/**
 * Checks a chain from its oldest record kept to its head: each record's hash is its content's, each
 * `prevHash` the hash of the record before, the `seq`s follow without gaps, and the head names the
 * newest record. Reads the chain a page at a time, so any length takes the memory of one page.
 */
export async function verifyChain(chain: ChainId): Promise<ChainVerdict> {
  const where = chainItems(chain);
  const head = await getItem<{ seq: number; hash: string }>(where.head);
  const verdict: ChainVerdict = { chain: chainName(chain), records: 0, headSeq: head?.seq ?? 0 };
  let previous: AuditRecord | undefined;
  let cursor: string | undefined;
  do {
    const page = await queryPage<StoredRecord>({
      partition: where.partition,
      prefix: where.recordPrefix,
      cursor,
      limit: 100,
    });
    for (const item of page.items) {
      const record = auditRecordOf(item);
      verdict.records += 1;
      if (previous === undefined) {
        verdict.firstSeq = record.seq;
        verdict.trustedPrevHash = record.prevHash;
        if (record.seq === 1 && record.prevHash !== firstPrevHash)
          return { ...verdict, broken: { seq: 1, reason: 'the first record links to a record before it' } };
      }
      const keySeq = Number(String(item.sk).slice(where.recordPrefix.length));
      const broken = brokenLink(record, previous, keySeq);
      if (broken) return { ...verdict, broken: { seq: keySeq, reason: broken } };
      previous = record;
    }
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  const last = previous;
  if ((last?.seq ?? 0) !== verdict.headSeq || (last && last.hash !== head?.hash)) {
    return {
      ...verdict,
      broken: {
        seq: verdict.headSeq,
        reason: `the head names seq ${verdict.headSeq}, the newest record is ${last?.seq ?? 'none'}`,
      },
    };
  }
  return verdict;
}

/** Why `record` does not follow `previous` in its chain, or undefined when it does. */
function brokenLink(record: AuditRecord, previous: AuditRecord | undefined, keySeq: number): string | undefined {
  if (record.seq !== keySeq) return `the record says seq ${record.seq}, its key ${keySeq}`;
  if (recordHash(record) !== record.hash) return 'its content does not match its hash';
  if (previous === undefined) return undefined;
  if (record.seq !== previous.seq + 1) return `it follows seq ${previous.seq}: ${record.seq - previous.seq - 1} records missing`;
  if (record.prevHash !== previous.hash) return `its prevHash is not the hash of seq ${previous.seq}`;
  return undefined;
}
