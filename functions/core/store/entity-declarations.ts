/**
 * Every item of the table, declared once (entities.ts says how to read a declaration). Facets are
 * named after the records' attributes. Numbers are zero-padded (`sortable`) where keys must order
 * as numbers do, and written as they are (`decimal`) elsewhere, as the stored keys have them.
 *
 * What they build is what the hand-written key builders they replaced built, byte for byte
 * (test/unit/golden-keys-frozen.test.ts).
 */
import {
  collection,
  type DeclaredEntity,
  decimal,
  entity,
  entityOf,
  folded,
  keyTemplate,
  letter,
  nameKeyed,
  sortable,
  text,
} from './entities.ts';

const tenantId = decimal('tenantId');
const clientId = decimal('clientId');
/** A tenant's partition: the tenant, and most of what it holds. */
const tenantPartition = keyTemplate`TENANT#${tenantId}`;
const clientPartition = keyTemplate`CLIENT#${clientId}`;
/** A datamart's item collection: its record and the permission records on its tables, read whole with one Query. */
const datamartPartition = keyTemplate`DATAMART#${tenantId}#${decimal('datamartId')}`;

/** A permission record's subject, a user or a group, written `U` or `G`. */
const subject = letter('subject', { user: 'U', group: 'G' });

// Ids, counts and claims: what other entities' rules name.

/** A global counter of ids: `client`, `tenant`, `template`. */
export const idCounter = entity({
  name: 'idCounter',
  description: 'an id counter of the table: `client`, `tenant`, `template`, `rollout`',
  key: { pk: keyTemplate`COUNTER`, sk: keyTemplate`${text('name')}` },
});

/** A counter of ids scoped to one tenant: `agent`, `user`, `run`, a resource type, … */
export const tenantIdCounter = entity({
  name: 'tenantIdCounter',
  description: 'an id counter of a tenant: `agent`, `user`, `run`, …',
  key: { pk: tenantPartition, sk: keyTemplate`COUNTER#${text('name')}` },
});

/** A quota count of a client (store/counts.ts): `TENANTS` (live ones), `TEMPLATES`. */
export const clientCount = entity({
  name: 'clientCount',
  description: 'a quota count of a client: `TENANTS` (live ones), `TEMPLATES`',
  key: { pk: clientPartition, sk: keyTemplate`COUNT#${text('name')}` },
});

/** A quota count of a tenant (store/counts.ts): `USERS`, `GROUPS`, `ALERTS`, …; `GROUPPERMBYTES` charges group records. */
export const tenantCount = entity({
  name: 'tenantCount',
  description:
    'a quota count of a tenant: `USERS`, `GROUPS`, `MEMBERSHIPS`, `DATAMARTS`, `ALERTS`, `SCHEDULES`, `GROUPPERMBYTES`',
  key: { pk: tenantPartition, sk: keyTemplate`COUNT#${text('name')}` },
});

/** How many agents the tenant has, kept with each creation so that the limit holds under concurrency. */
export const agentCount = entity({
  name: 'agentCount',
  description: "the tenant's count of agents",
  key: { pk: tenantPartition, sk: keyTemplate`AGENTCOUNT` },
});

/** Makes a login unique in its tenant (as a reader sees it) and finds its user with one GetItem. */
export const userLogin = entity({
  name: 'userLogin',
  description: 'a login claim',
  key: { pk: tenantPartition, sk: keyTemplate`LOGIN#${folded('login')}` },
});

/** Makes an agent's name unique in its tenant, exactly as written (names are the slots connections refer to). */
export const agentName = entity({
  name: 'agentName',
  description: 'an agent name claim',
  key: { pk: tenantPartition, sk: keyTemplate`AGENTNAME#${text('nome')}` },
});

/** Makes a template's name unique among the client's templates (compared as names.ts `nameKey` does). */
export const templateName = entity({
  name: 'templateName',
  description: 'a template name claim',
  key: { pk: clientPartition, sk: keyTemplate`TEMPLATENAME#${nameKeyed('nome')}` },
});

// Clients and tenants.

/** Resolves a bearer token from its SHA-256 with one GetItem. */
export const token = entity({
  name: 'token',
  description: 'a bearer token, by its SHA-256',
  key: { pk: keyTemplate`TOKEN#${text('tokenHash')}`, sk: keyTemplate`TOKEN` },
});

export const client = entity({
  name: 'client',
  key: { pk: clientPartition, sk: keyTemplate`CLIENT` },
  /** Every client, for the admin CLI. */
  indexes: { gsi1: { pk: keyTemplate`CLIENTS`, sk: keyTemplate`${sortable('clientId')}` } },
});

export const tenant = entity({
  name: 'tenant',
  key: { pk: tenantPartition, sk: keyTemplate`TENANT` },
  /** A client's live tenants. */
  indexes: {
    gsi1: {
      pk: keyTemplate`CLIENT#${clientId}#TENANTS`,
      sk: keyTemplate`${sortable('tenantId')}`,
      sparse: 'while the tenant is not deleted: its deletion removes the entry',
    },
  },
  count: { kind: 'quota-count', item: clientCount, name: 'TENANTS' },
});

/** Kept after a tenant's soft delete, for billing. */
export const tenantDeletionRecord = entity({
  name: 'tenantDeletionRecord',
  description: 'the billing record of a deleted tenant',
  key: { pk: tenantPartition, sk: keyTemplate`BILLING#DELETED` },
});

/** The tenant's settings (alert channels, webhook signing secrets). */
export const tenantSettings = entity({
  name: 'tenantSettings',
  description: "the tenant's settings (alert channels, webhook signing secrets)",
  key: { pk: tenantPartition, sk: keyTemplate`SETTINGS` },
});

// Templates, and what applying one puts in a tenant.

export const templateVersion = entity({
  name: 'templateVersion',
  description: 'a version of a template (its bundle)',
  key: { pk: clientPartition, sk: keyTemplate`TEMPLATEVERSION#${decimal('templateId')}#${sortable('version')}` },
  count: { kind: 'parent-attribute', parent: (): DeclaredEntity => template, attribute: 'latestVersion' },
});

export const template = entity({
  name: 'template',
  key: { pk: clientPartition, sk: keyTemplate`TEMPLATE#${sortable('templateId')}` },
  unique: [{ attribute: 'nome', claim: templateName, holder: 'templateId', takeover: 'never', release: 'with-holder' }],
  count: { kind: 'quota-count', item: clientCount, name: 'TEMPLATES' },
  sweep: { followUp: 'sweep-template', leaves: [templateVersion] },
});

/** A resource a template put in a tenant (desk, table, flow…), by type and integer id. */
export const tenantResource = entity({
  name: 'tenantResource',
  description: 'a resource a template put in the tenant (desk, table, flow, …)',
  key: { pk: tenantPartition, sk: keyTemplate`R#${text('type')}#${sortable('id')}` },
});

/**
 * The template a tenant has (the one it last applied, or is waiting for) and its version there (0:
 * none yet), for the template's fleet: its index entry lists a template's tenants by version, so the
 * tenants below a version are one range of it. Written with the apply, the creation or the rollout
 * step that changes it; the tenant's deletion removes it.
 */
export const templateMember = entity({
  name: 'templateMember',
  description: "the template the tenant has, its version there and whether an apply of it is pending (the template's fleet)",
  key: { pk: tenantPartition, sk: keyTemplate`FLEET` },
  indexes: {
    gsi1: {
      pk: keyTemplate`CLIENT#${clientId}#TEMPLATE#${decimal('templateId')}#FLEET`,
      sk: keyTemplate`${sortable('templateVersion')}#${sortable('tenantId')}`,
    },
  },
});

/** A rollout's item collection: its record and its tenants. */
const rolloutPartition = keyTemplate`ROLLOUT#${decimal('rolloutId')}`;

/** A rollout of a template version to the template's tenants, in waves (rollouts/rollouts.ts). */
export const rollout = entity({
  name: 'rollout',
  description: "a rollout of a template version to the template's tenants, in waves (expires after `runRetentionDays`)",
  key: { pk: rolloutPartition, sk: keyTemplate`ROLLOUT` },
  /** A template's rollouts. */
  indexes: {
    gsi1: {
      pk: keyTemplate`CLIENT#${clientId}#TEMPLATE#${decimal('templateId')}#ROLLOUTS`,
      sk: keyTemplate`${sortable('rolloutId')}`,
    },
  },
});

/** One tenant of a rollout: its wave, and its outcome once its turn came. */
export const rolloutTarget = entity({
  name: 'rolloutTarget',
  description: 'one tenant of a rollout: its wave and outcome (expires with its rollout)',
  key: { pk: rolloutPartition, sk: keyTemplate`TARGET#${sortable('wave')}#${sortable('tenantId')}` },
  /** A rollout's tenants by outcome. */
  indexes: {
    gsi1: { pk: keyTemplate`ROLLOUT#${decimal('rolloutId')}#${text('outcome')}`, sk: keyTemplate`${sortable('tenantId')}` },
  },
});

/** The tenant's template apply in progress or last finished (a lock and a journal). */
export const applyJournal = entity({
  name: 'applyJournal',
  description: "the tenant's apply journal (lock, pending tables, resource id counters)",
  key: { pk: tenantPartition, sk: keyTemplate`APPLY` },
});

// Agents and their runs.

export const agent = entity({
  name: 'agent',
  key: { pk: tenantPartition, sk: keyTemplate`AGENT#${sortable('agentId')}` },
  unique: [{ attribute: 'nome', claim: agentName, holder: 'agentId', takeover: 'never', release: 'never' }],
  count: { kind: 'own-count', item: agentCount },
});

export const run = entity({
  name: 'run',
  description: 'a load handed to an agent (expires after `runRetentionDays`)',
  key: { pk: tenantPartition, sk: keyTemplate`RUN#${sortable('runId')}` },
  /** An agent's runs waiting to be picked up. */
  indexes: {
    gsi1: {
      pk: keyTemplate`AGENT#${tenantId}#${decimal('agentId')}#PENDING`,
      sk: keyTemplate`${sortable('runId')}`,
      sparse: 'while the run waits: the agent taking it removes the entry',
    },
  },
});

/** Marks a queued load as recorded, so that a redelivered message never makes a second run. */
export const recordedLoad = entity({
  name: 'recordedLoad',
  description: 'the marker of a queued load made a run (expires after 7 days)',
  key: { pk: tenantPartition, sk: keyTemplate`LOAD#${text('deduplicationId')}` },
});

// Users, groups, datamarts and permissions.

/** A user in a group. */
export const membership = entity({
  name: 'membership',
  description: 'a user in a group',
  key: { pk: tenantPartition, sk: keyTemplate`MEMBER#${sortable('groupId')}#${sortable('userId')}` },
  /** A user's memberships, so that deleting the user finds them. */
  indexes: {
    gsi1: { pk: keyTemplate`TENANT#${tenantId}#USER#${decimal('userId')}#GROUPS`, sk: keyTemplate`${sortable('groupId')}` },
  },
  count: { kind: 'quota-count', item: tenantCount, name: 'MEMBERSHIPS' },
});

/**
 * A user's or group's permission record on one table of a datamart, in the datamart's item
 * collection. Its index entry puts the tenant's records in one partition, by subject, then datamart,
 * then table: a subject's records, a range of users' records and every group's records are each one Query.
 */
export const permission = entity({
  name: 'permission',
  description: "a user's or group's permission record on one table of a datamart (`charge`)",
  key: {
    pk: datamartPartition,
    sk: keyTemplate`P#${subject}#${sortable('subjectId')}#${sortable('tableId')}`,
  },
  indexes: {
    gsi1: {
      pk: keyTemplate`TENANT#${tenantId}#PERMS`,
      sk: keyTemplate`${subject}#${sortable('subjectId')}#${sortable('datamartId')}#${sortable('tableId')}`,
    },
  },
  /** Where an earlier version indexed them: one index partition per subject. */
  legacyIndexes: {
    gsi1: {
      pk: keyTemplate`TENANT#${tenantId}#PERMS#${subject}#${decimal('subjectId')}`,
      sk: keyTemplate`${sortable('datamartId')}#${sortable('tableId')}`,
    },
  },
});

/** A table of a datamart, as an item of its collection. */
export const datamartTable = entity({
  name: 'datamartTable',
  description: 'a table of a datamart',
  key: { pk: datamartPartition, sk: keyTemplate`S#TABLE#${sortable('tableId')}` },
  legacy: "the datamart record's table list",
});

/** An owner of a datamart, as an item of its collection, indexed by user so that deleting the user finds it. */
export const datamartOwner = entity({
  name: 'datamartOwner',
  description: 'an owner of a datamart',
  key: { pk: datamartPartition, sk: keyTemplate`S#OWNER#${sortable('userId')}` },
  indexes: {
    gsi1: { pk: keyTemplate`TENANT#${tenantId}#OWNER#${decimal('userId')}`, sk: keyTemplate`${sortable('datamartId')}` },
  },
  legacy: "the datamart record's owner list, and the owner's entry in the owners index",
});

/** A datamart's record, holding its table and owner lists; the first item of its collection. */
export const datamart = entity({
  name: 'datamart',
  description: 'a datamart (its table and owner lists)',
  key: { pk: datamartPartition, sk: keyTemplate`S#DM` },
  /** A tenant's datamarts: the records themselves, so that a page of them is one Query. */
  indexes: { gsi1: { pk: keyTemplate`TENANT#${tenantId}#DATAMARTS`, sk: keyTemplate`${sortable('datamartId')}` } },
  count: { kind: 'quota-count', item: tenantCount, name: 'DATAMARTS' },
  sweep: { followUp: 'tidy-datamart', leaves: [permission, datamartTable, datamartOwner] },
});

export const user = entity({
  name: 'user',
  description: "a user (`permBytes`: its own records' charge)",
  key: { pk: tenantPartition, sk: keyTemplate`USER#${sortable('userId')}` },
  /** The tenant's datamart owners, with their names and logins (a projection DynamoDB keeps in step), in one Query. */
  indexes: {
    gsi1: {
      pk: keyTemplate`TENANT#${tenantId}#OWNERS`,
      sk: keyTemplate`${sortable('userId')}`,
      sparse: 'once the user has owned a datamart',
      writtenBy: datamart,
    },
  },
  unique: [{ attribute: 'login', claim: userLogin, holder: 'userId', takeover: 'when-holder-gone', release: 'while-held' }],
  count: { kind: 'quota-count', item: tenantCount, name: 'USERS' },
  sweep: { followUp: 'sweep-user', leaves: [membership, permission, datamartOwner] },
});

export const group = entity({
  name: 'group',
  key: { pk: tenantPartition, sk: keyTemplate`GROUP#${sortable('groupId')}` },
  count: { kind: 'quota-count', item: tenantCount, name: 'GROUPS' },
  sweep: { followUp: 'sweep-group', leaves: [membership, permission] },
});

// Schedules.

/** One fire of a schedule; the key is the slot, so that a slot has one run however often it is written. */
export const scheduleRun = entity({
  name: 'scheduleRun',
  description: 'one fire of a schedule, keyed by its slot (expires after `runRetentionDays`)',
  key: { pk: tenantPartition, sk: keyTemplate`SCHEDRUN#${sortable('scheduleId')}#${text('slot')}` },
});

/** A schedule file of a tenant, by the id in its header. */
export const schedule = entity({
  name: 'schedule',
  description: 'a schedule file',
  key: { pk: tenantPartition, sk: keyTemplate`SCHEDULE#${sortable('scheduleId')}` },
  /**
   * Its next fire time, on one of the due shards (schedule-repository.ts: dueIndexEntry). ISO
   * instants sort as time; within one, by `turn`. The `t` before the turn keeps every key of the
   * earlier shape (instant#tenant#schedule) from being a prefix of one of these.
   */
  indexes: {
    gsi1: {
      pk: keyTemplate`SCHEDULES#DUE#${decimal('shard')}`,
      sk: keyTemplate`${text('nextFireAt')}#t${sortable('turn')}#${sortable('tenantId')}#${sortable('scheduleId')}`,
      sparse: 'while the schedule is active',
    },
  },
  count: { kind: 'quota-count', item: tenantCount, name: 'SCHEDULES' },
});

/** Where the dispatcher stopped listing a due shard when a tick ran out of time. */
export const dispatchCursor = entity({
  name: 'dispatchCursor',
  description: 'where the dispatcher stopped listing a due shard',
  key: { pk: keyTemplate`DISPATCHER`, sk: keyTemplate`CURSOR#${decimal('shard')}` },
});

/** The highest number of due shards any deployment has written to: the dispatcher lists them all. */
export const dispatchShards = entity({
  name: 'dispatchShards',
  description: 'the most due shards any deployment has written to',
  key: { pk: keyTemplate`DISPATCHER`, sk: keyTemplate`SHARDS` },
});

// Alerts and their webhook deliveries.

export const alert = entity({
  name: 'alert',
  key: { pk: tenantPartition, sk: keyTemplate`ALERT#${sortable('alertId')}` },
  count: { kind: 'quota-count', item: tenantCount, name: 'ALERTS' },
});

/** One delivery of an alert (its attempts). */
export const delivery = entity({
  name: 'delivery',
  description: 'a delivery of an alert, with its attempts (expires after `deliveryRetentionDays`)',
  key: { pk: tenantPartition, sk: keyTemplate`DELIVERY#${sortable('deliveryId')}` },
  /** An alert's deliveries. */
  indexes: {
    gsi1: {
      pk: keyTemplate`TENANT#${tenantId}#ALERT#${decimal('alertId')}#DELIVERIES`,
      sk: keyTemplate`${sortable('deliveryId')}`,
    },
  },
});

/** A delivery's payload, when small enough for an item (else it is in the payload bucket). */
export const deliveryBody = entity({
  name: 'deliveryBody',
  description: "a delivery's payload, when it fits in an item (expires with its delivery)",
  key: { pk: tenantPartition, sk: keyTemplate`DELIVERYBODY#${sortable('deliveryId')}` },
});

/** The tenant's webhook endpoint's circuit breaker (only while attempts time out or fail to connect). */
export const webhookEndpoint = entity({
  name: 'webhookEndpoint',
  description: "the webhook endpoint's breaker, only while attempts stall (expires after 30 days)",
  key: { pk: tenantPartition, sk: keyTemplate`WEBHOOK#ENDPOINT` },
});

/** One attempt slot of the tenant's webhook endpoint (a lease per attempt in flight). */
export const webhookSlot = entity({
  name: 'webhookSlot',
  description: 'a webhook attempt slot: a lease per attempt in flight (expires after 30 days)',
  key: { pk: tenantPartition, sk: keyTemplate`WEBHOOK#SLOT#${sortable('slot')}` },
});

// The integrator's events (events/client-events.ts): a client's own webhook channel, kept as a
// tenant's is (the same sort keys, in the client's partition; webhooks/owner.ts picks them).

/** The client's settings (its events webhook and signing secrets). */
export const clientSettings = entity({
  name: 'clientSettings',
  description: "the client's settings (its events webhook, signing secrets)",
  key: { pk: clientPartition, sk: keyTemplate`SETTINGS` },
});

/** A counter of ids scoped to one client: `delivery`. */
export const clientIdCounter = entity({
  name: 'clientIdCounter',
  description: 'an id counter of a client: `delivery`',
  key: { pk: clientPartition, sk: keyTemplate`COUNTER#${text('name')}` },
});

/** One delivery of an event to the client's webhook (its attempts). */
export const eventDelivery = entity({
  name: 'eventDelivery',
  description: "a delivery of an event to the client's webhook, with its attempts (expires after `deliveryRetentionDays`)",
  key: { pk: clientPartition, sk: keyTemplate`DELIVERY#${sortable('deliveryId')}` },
});

/** An event delivery's payload, when small enough for an item (else it is in the payload bucket). */
export const eventDeliveryBody = entity({
  name: 'eventDeliveryBody',
  description: "an event delivery's payload, when it fits in an item (expires with its delivery)",
  key: { pk: clientPartition, sk: keyTemplate`DELIVERYBODY#${sortable('deliveryId')}` },
});

/** The client's webhook endpoint's circuit breaker (only while attempts time out or fail to connect). */
export const clientWebhookEndpoint = entity({
  name: 'clientWebhookEndpoint',
  description: "the client's webhook endpoint's breaker, only while attempts stall (expires after 30 days)",
  key: { pk: clientPartition, sk: keyTemplate`WEBHOOK#ENDPOINT` },
});

/** One attempt slot of the client's webhook endpoint (a lease per attempt in flight). */
export const clientWebhookSlot = entity({
  name: 'clientWebhookSlot',
  description: "a client's webhook attempt slot: a lease per attempt in flight (expires after 30 days)",
  key: { pk: clientPartition, sk: keyTemplate`WEBHOOK#SLOT#${sortable('slot')}` },
});

// What requests and writes leave behind them.

/** A BI session opened by the SSO landing, by the SHA-256 of its cookie value. */
export const session = entity({
  name: 'session',
  description: 'a BI session, by the SHA-256 of its cookie (expires after 8 hours)',
  key: { pk: keyTemplate`SESSION#${text('sessionHash')}`, sk: keyTemplate`SESSION` },
});

/**
 * Work a write left to finish, written in the same transaction as that write; spread over shards by
 * owner (`shard` = `ownerId` modulo the shard count, follow-up-repository.ts), which the sweeper reads.
 */
export const followUp = entity({
  name: 'followUp',
  description: "work a write left to finish (`shard`: the owner's id modulo the shard count)",
  key: {
    pk: keyTemplate`FOLLOWUP#${decimal('shard')}`,
    sk: keyTemplate`${text('kind')}#${sortable('ownerId')}#${sortable('subjectId')}`,
  },
});

/** One per (caller, route, Idempotency-Key). */
export const idempotency = entity({
  name: 'idempotency',
  description: 'one per caller and route (`scope`) and Idempotency-Key (`keyHash`: its SHA-256); expires after 24 hours',
  key: { pk: keyTemplate`IDEMPOTENCY#${text('scope')}#${text('keyHash')}`, sk: keyTemplate`IDEMPOTENCY` },
});

// The audit trail (audit/): one hash chain per tenant and per client, each record written in the
// transaction of the change it records.

/** Whose chain an audit record is in: a tenant's (its own changes, its client's on it) or a client's (an agent's: below). */
const auditChain = keyTemplate`AUDIT#${letter('owner', { tenant: 'T', client: 'C' })}#${decimal('ownerId')}`;

/** The newest record of a chain: its `seq` and `hash`, what the next record links to. */
export const auditHead = entity({
  name: 'auditHead',
  description: "an audit chain's head: the `seq` and `hash` of its newest record (kept for good)",
  key: { pk: auditChain, sk: keyTemplate`HEAD` },
});

/** One audit record: who changed what, when, through which request; chained to the one before by hash. */
export const auditRecord = entity({
  name: 'auditRecord',
  description: 'an audit record of one change, linked by hash to the one before (expires after `auditRetentionDays`)',
  key: { pk: auditChain, sk: keyTemplate`RECORD#${sortable('seq')}` },
  /** Every record of a client's chain and of its tenants' chains, by time: `GET /tenants/audit`. */
  indexes: {
    gsi1: {
      pk: keyTemplate`CLIENT#${clientId}#AUDIT`,
      sk: keyTemplate`${text('at')}#${letter('owner', { tenant: 'T', client: 'C' })}#${decimal('ownerId')}#${sortable('seq')}`,
    },
  },
});

/**
 * An agent's own chain: its run reports (POST /agent/runs/{id}), two per run, kept as long as the runs
 * (`runRetentionDays`), so the tenant's chain and the client's index keep the changes people make.
 */
const agentAuditChain = keyTemplate`AUDIT#A#${tenantId}#${decimal('agentId')}`;

export const agentAuditHead = entity({
  name: 'agentAuditHead',
  description: "an agent's audit chain's head: the `seq` and `hash` of its newest run report's record (kept for good)",
  key: { pk: agentAuditChain, sk: keyTemplate`HEAD` },
});

export const agentAuditRecord = entity({
  name: 'agentAuditRecord',
  description: "an audit record of an agent's run report, linked by hash to the one before (expires after `runRetentionDays`)",
  key: { pk: agentAuditChain, sk: keyTemplate`RECORD#${sortable('seq')}` },
});

/** That an idempotent request's record is written: a retry of it commits its change without a second record. */
export const auditMarker = entity({
  name: 'auditMarker',
  description: "that an idempotent request's audit record is written (expires after 24 hours, with the request's key)",
  key: { pk: keyTemplate`AUDITREQ#${text('requestKey')}`, sk: keyTemplate`AUDITREQ` },
});

/** Which migrations of a set the table has had, and the one running (store/migrations.ts). */
export const migrationState = entity({
  name: 'migrationState',
  description: 'which migrations of a set (`stored-data`) the table has had, the one running and its Scan cursor, the lease',
  key: { pk: keyTemplate`MIGRATION`, sk: keyTemplate`STATE#${text('set')}` },
});

/** Every entity, by the name it declares. */
export const entities = {
  idCounter,
  tenantIdCounter,
  clientCount,
  tenantCount,
  agentCount,
  userLogin,
  agentName,
  templateName,
  token,
  client,
  tenant,
  tenantDeletionRecord,
  tenantSettings,
  templateVersion,
  template,
  tenantResource,
  applyJournal,
  templateMember,
  rollout,
  rolloutTarget,
  agent,
  run,
  recordedLoad,
  membership,
  permission,
  datamartTable,
  datamartOwner,
  datamart,
  user,
  group,
  scheduleRun,
  schedule,
  dispatchCursor,
  dispatchShards,
  alert,
  delivery,
  deliveryBody,
  webhookEndpoint,
  webhookSlot,
  clientSettings,
  clientIdCounter,
  eventDelivery,
  eventDeliveryBody,
  clientWebhookEndpoint,
  clientWebhookSlot,
  session,
  followUp,
  idempotency,
  auditHead,
  auditRecord,
  agentAuditHead,
  agentAuditRecord,
  auditMarker,
  migrationState,
} as const;

/** Items read together with one Query of a sort key prefix. */
export const collections = {
  /** The webhook endpoint's breaker and its attempt slots (`WEBHOOK#`). */
  webhookEndpoint: collection('webhookEndpoint', [webhookEndpoint, webhookSlot]),
  /** The client's webhook endpoint's breaker and its attempt slots (`WEBHOOK#`). */
  clientWebhookEndpoint: collection('clientWebhookEndpoint', [clientWebhookEndpoint, clientWebhookSlot]),
} as const;

/** The declared entity an item is, by its key (entities.ts `entityOf`). */
export const declaredEntityOf = (item: { pk: string; sk: string }) => entityOf(item, Object.values(entities));
