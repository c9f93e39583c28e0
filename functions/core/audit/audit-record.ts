import { createHash } from 'node:crypto';
import { canonicalJson } from '#functions/core/canonical-json.ts';
import { getItem, tableName, type TransactItem, transactOrReasons } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { expiresAt } from '#functions/core/store/retention.ts';
import { type AuditScope, type CommitOutcome, pendingAudit } from './audit-scope.ts';

/**
 * Audit records: one per change a client, a tenant, an agent or an operator (the admin CLI) makes,
 * written in the transaction of the change itself (store/dynamo.ts adds it to the request's first
 * committing transaction), so that there is never a change without its record nor a record without
 * its change. Records form hash chains, one per tenant, one per client and one per agent (its run
 * reports): each holds the hash of the one before, and the chain's head item (its newest `seq` and `hash`) is updated in the same
 * transaction under a condition on the `seq` it had, so two changes can never take the same place.
 */

/** Who made the change. `tokenId`: the first 16 hex digits of the token's SHA-256, never the token. */
export type AuditActor =
  | { kind: 'client'; clientId: number; tokenId?: string }
  | { kind: 'tenant'; clientId: number; tenantId: number; tokenId?: string }
  | { kind: 'agent'; clientId: number; tenantId: number; agentId: number; tokenId?: string }
  | { kind: 'operator'; name: string };

/**
 * Which chain: a tenant's (its changes, its client's on it), a client's (the rest), or an agent's
 * (its run reports; `ownerId` is the agent's id within `tenantId`).
 */
export type ChainId = { owner: 'tenant' | 'client'; ownerId: number } | { owner: 'agent'; ownerId: number; tenantId: number };

/** The chain a record joins. */
export type AuditChain = ChainId & {
  /** The client the chain belongs to (a tenant's client): `GET /tenants/audit` reads its records and its tenants'. */
  clientId: number;
};

/** What a request that changes something is, as its record tells it (no value, secret or token: field names only). */
export interface AuditRequest {
  /**
   * The chain it joins; for a change that creates the chain's owner (the admin CLI's `client create`),
   * a function of the ids the request took from its counters, known by the time it commits.
   */
  chain: AuditChain | ((allocated: (counter: string) => number | undefined) => AuditChain);
  actor: AuditActor;
  /** The route (`PATCH /tenant/users/{id}`) or the admin CLI command (`admin client create`). */
  action: string;
  /** What it changes; a creation's id is the first id it takes from the counter of that name, unless given. */
  resource: { type: string; id?: string };
  /** The path as sent, for a route. */
  path?: string;
  /** The names of the body's top-level fields: what it set, never the values. */
  fields: readonly string[];
  requestId: string;
  viewerAddress?: string;
  /** An idempotent request's key (the same for every attempt): its record is written once, whichever attempt commits. */
  requestKey?: string;
}

/** A record as stored (less its keys) and as the audit routes answer it. */
export interface AuditRecord {
  /** `tenant:<id>`, `client:<id>` or `tenant:<id>/agent:<id>`. */
  chain: string;
  /** Its place in the chain, from 1, without gaps. */
  seq: number;
  at: string;
  actor: AuditActor;
  action: string;
  resource: { type: string; id?: string };
  path?: string;
  fields: string[];
  requestId: string;
  viewerAddress?: string;
  /** The hash of the record before it in the chain (64 zeros for the first). */
  prevHash: string;
  /** SHA-256 of the record's canonical JSON without `hash`. */
  hash: string;
}

/**
 * What a record keeps at most, whatever the request: a body's schema declares its fields (far fewer, with
 * short names), and a path is a route's with its ids; the bounds keep a page of records small anyway.
 */
const maxFields = 64;
const maxFieldNameLength = 128;
const maxPathLength = 1024;

/** The `prevHash` of a chain's first record. */
export const firstPrevHash = '0'.repeat(64);

/** How many times a record is placed again when another change took its place in the chain first. */
const headAttempts = 25;

export const chainName = (chain: ChainId) =>
  chain.owner === 'agent' ? `tenant:${chain.tenantId}/agent:${chain.ownerId}` : `${chain.owner}:${chain.ownerId}`;

/**
 * Where a chain's items are: an agent's in its own partition, its records kept as long as the runs
 * they report on and not in the client's index by time; a tenant's or a client's kept
 * `auditRetentionDays`, each record also in that index (`GET /tenants/audit`).
 */
export function chainItems(chain: ChainId) {
  if (chain.owner === 'agent') {
    const agent = { tenantId: chain.tenantId, agentId: chain.ownerId };
    return {
      head: stored.agentAuditHead.key(agent),
      partition: stored.agentAuditRecord.partition(agent),
      recordPrefix: stored.agentAuditRecord.keyPrefix({}),
      record: (placed: { seq: number; at: string; clientId: number }) => stored.agentAuditRecord.key({ ...agent, ...placed }),
      retention: 'runRetentionDays',
    } as const;
  }
  const owner = { owner: chain.owner, ownerId: chain.ownerId };
  return {
    head: stored.auditHead.key(owner),
    partition: stored.auditRecord.partition(owner),
    recordPrefix: stored.auditRecord.keyPrefix({}),
    record: (placed: { seq: number; at: string; clientId: number }) => ({
      ...stored.auditRecord.key({ ...owner, ...placed }),
      ...stored.auditRecord.indexEntry({ ...owner, ...placed }),
    }),
    retention: 'auditRetentionDays',
  } as const;
}

/** A record's hash: SHA-256 of its canonical JSON, `hash` left out. */
export function recordHash(record: Omit<AuditRecord, 'hash'>): string {
  const { hash: _left, ...fields } = record as AuditRecord;
  return createHash('sha256').update(canonicalJson(fields), 'utf8').digest('hex');
}

const recordFields = [
  'chain',
  'seq',
  'at',
  'actor',
  'action',
  'resource',
  'path',
  'fields',
  'requestId',
  'viewerAddress',
  'prevHash',
  'hash',
] as const satisfies readonly (keyof AuditRecord)[];

/** The record a stored item holds, without its keys, index entry and expiry (what its hash covers, and `hash`). */
export function auditRecordOf(item: Record<string, unknown>): AuditRecord {
  return Object.fromEntries(
    recordFields.filter((field) => field in item).map((field) => [field, item[field]]),
  ) as unknown as AuditRecord;
}

interface Head {
  seq: number;
  hash: string;
}

/** The last head this process wrote or read, per chain: read again only when a condition says it moved. */
const knownHeads = new Map<string, Head>();
/** The commit in progress per chain in this process: its own changes to one chain wait in turn rather than race. */
const chainTurns = new Map<string, Promise<unknown>>();

async function inTurn<T>(chain: string, work: () => Promise<T>): Promise<T> {
  const before = chainTurns.get(chain) ?? Promise.resolve();
  const mine = before.then(work, work);
  const settled = mine.then(
    () => undefined,
    () => undefined,
  );
  chainTurns.set(chain, settled);
  try {
    return await mine;
  } finally {
    if (chainTurns.get(chain) === settled) chainTurns.delete(chain);
  }
}

async function readHead(chain: AuditChain): Promise<Head> {
  const head = await getItem<Head>(chainItems(chain).head);
  return head ? { seq: head.seq, hash: head.hash } : { seq: 0, hash: firstPrevHash };
}

/** The items that write `record` after `head`: the record, the head moved on, and an idempotent request's marker. */
function auditItems(request: AuditRequest, chain: AuditChain, record: AuditRecord, head: Head): TransactItem[] {
  const where = chainItems(chain);
  const items: TransactItem[] = [
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...where.record({ seq: record.seq, at: record.at, clientId: chain.clientId }),
          ...record,
          expiresAt: expiresAt(where.retention, Date.parse(record.at)),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Update: {
        TableName: tableName(),
        Key: where.head,
        UpdateExpression: 'SET #seq = :seq, #hash = :hash',
        ConditionExpression: head.seq === 0 ? 'attribute_not_exists(pk)' : '#seq = :was',
        ExpressionAttributeNames: { '#seq': 'seq', '#hash': 'hash' },
        ExpressionAttributeValues: { ':seq': record.seq, ':hash': record.hash, ...(head.seq === 0 ? {} : { ':was': head.seq }) },
      },
    },
  ];
  if (request.requestKey !== undefined) {
    items.push({
      Put: {
        TableName: tableName(),
        Item: {
          ...stored.auditMarker.key({ requestKey: request.requestKey }),
          expiresAt: Math.floor(Date.now() / 1000) + 86_400,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    });
  }
  return items;
}

/** The position of the marker among auditItems' items. */
const markerIndex = 2;

function recordAfter(
  request: AuditRequest,
  chain: AuditChain,
  head: Head,
  createdId: number | undefined,
  now: number,
): AuditRecord {
  const id = request.resource.id ?? (createdId === undefined ? undefined : String(createdId));
  const record: Omit<AuditRecord, 'hash'> = {
    chain: chainName(chain),
    seq: head.seq + 1,
    at: new Date(now).toISOString(),
    actor: request.actor,
    action: request.action,
    resource: { type: request.resource.type, ...(id === undefined ? {} : { id }) },
    ...(request.path === undefined ? {} : { path: request.path.slice(0, maxPathLength) }),
    fields: request.fields.slice(0, maxFields).map((name) => name.slice(0, maxFieldNameLength)),
    requestId: request.requestId,
    ...(request.viewerAddress === undefined ? {} : { viewerAddress: request.viewerAddress }),
    prevHash: head.hash,
  };
  return { ...record, hash: recordHash(record) };
}

/**
 * The scope of a request that owes `request`'s record (audit-scope.ts): its first committing
 * transaction carries the record. A transaction that fails on the change's own conditions writes no
 * record either (the record stays owed); one that fails only because the chain's head moved (another
 * change took the place) is placed again after the new head; one whose marker exists (an earlier
 * attempt of the same idempotent request wrote the record) commits the change alone.
 */
export function auditScopeFor(request: AuditRequest): AuditScope {
  let pending = true;
  const allocated = new Map<string, number>();
  const chainOf = (): AuditChain =>
    typeof request.chain === 'function' ? request.chain((counter) => allocated.get(counter)) : request.chain;
  return {
    get pending() {
      return pending;
    },
    noteAllocated(counter, id) {
      if (!allocated.has(counter)) allocated.set(counter, id);
    },
    commitWith(items, send) {
      const owner = chainOf();
      const chain = chainName(owner);
      return inTurn(chain, async (): Promise<CommitOutcome> => {
        for (let attempt = 1; ; attempt++) {
          // A record alone (a queued change) that an earlier attempt wrote: nothing is left to send.
          if (!pending) return items.length > 0 ? send(items) : { written: true };
          const head = knownHeads.get(chain) ?? (await readHead(owner));
          const record = recordAfter(request, owner, head, allocated.get(request.resource.type), Date.now());
          const outcome = await send([...items, ...auditItems(request, owner, record, head)]);
          if (outcome.written) {
            knownHeads.set(chain, { seq: record.seq, hash: record.hash });
            pending = false;
            return outcome;
          }
          const own = outcome.failedConditions.filter((index) => index < items.length);
          if (own.length > 0) return { written: false, failedConditions: own };
          knownHeads.delete(chain);
          if (outcome.failedConditions.includes(items.length + markerIndex)) pending = false;
          else if (attempt === headAttempts) throw new Error(`The audit chain ${chain} moved ${attempt} times in a row`);
          else await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * Math.min(attempt, 5)));
        }
      });
    },
  };
}

/**
 * Commits the current request's record, if still owed, in a transaction of its own: for a change that
 * is a queued message (a reload), once the message is sent. A crash between the two leaves the
 * message without its record; the retry with the same Idempotency-Key writes it (once: its marker).
 */
export async function recordAlone(): Promise<void> {
  if (pendingAudit()) await transactOrReasons([]);
}
