/**
 * Key builders for every item in the table, named after the access pattern they serve.
 * Tenant-scoped keys always start with `TENANT#<id>`, the id coming from the authenticated token.
 */
import { foldedText } from '#functions/core/names.ts';

export type PermissionSubject = 'user' | 'group';

/** Zero-padded so that index sort keys order numerically. */
const sortable = (id: number) => id.toString().padStart(12, '0');

const subjectLetter = (subject: PermissionSubject) => (subject === 'user' ? 'U' : 'G');

/** A permission record's entry in its tenant's permission index (keys.permission). */
const permissionIndex = (
  tenantId: number,
  datamartId: number,
  subject: PermissionSubject,
  subjectId: number,
  tableId: number,
) => ({
  gsi1pk: `TENANT#${tenantId}#PERMS`,
  gsi1sk: `${subjectLetter(subject)}#${sortable(subjectId)}#${sortable(datamartId)}#${sortable(tableId)}`,
});

export const keys = {
  /** Global counters (ids of clients, tenants, templates). */
  counter: (name: string) => ({ pk: 'COUNTER', sk: name }),
  /** Counters of ids scoped to one tenant (agents, resources, runs). */
  tenantCounter: (tenantId: number, name: string) => ({ pk: `TENANT#${tenantId}`, sk: `COUNTER#${name}` }),

  client: (clientId: number) => ({ pk: `CLIENT#${clientId}`, sk: 'CLIENT' }),
  /** A count that bounds what the client creates (store/counts.ts): `TENANTS`, `TEMPLATES`. */
  clientCount: (clientId: number, name: string) => ({ pk: `CLIENT#${clientId}`, sk: `COUNT#${name}` }),
  /** Index entry listing every client, for the admin CLI. */
  clientsIndex: (clientId: number) => ({ gsi1pk: 'CLIENTS', gsi1sk: sortable(clientId) }),

  /** Resolves a bearer token from its SHA-256 with one GetItem. */
  token: (tokenHash: string) => ({ pk: `TOKEN#${tokenHash}`, sk: 'TOKEN' }),

  tenant: (tenantId: number) => ({ pk: `TENANT#${tenantId}`, sk: 'TENANT' }),
  /** A count that bounds what the tenant creates (store/counts.ts): `USERS`, `GROUPS`, `ALERTS`, … */
  tenantCount: (tenantId: number, name: string) => ({ pk: `TENANT#${tenantId}`, sk: `COUNT#${name}` }),
  /** Index entry listing a client's live tenants; removed on delete so the index stays sparse. */
  clientTenantsIndex: (clientId: number, tenantId: number) => ({
    gsi1pk: `CLIENT#${clientId}#TENANTS`,
    gsi1sk: sortable(tenantId),
  }),
  /** Kept after a soft delete for billing. */
  tenantDeletionRecord: (tenantId: number) => ({ pk: `TENANT#${tenantId}`, sk: 'BILLING#DELETED' }),

  template: (clientId: number, templateId: number) => ({ pk: `CLIENT#${clientId}`, sk: `TEMPLATE#${sortable(templateId)}` }),
  /** Prefix of a client's templates (not of their versions: `TEMPLATEVERSION#` does not start with it). */
  templatesPrefix: 'TEMPLATE#',
  templateVersion: (clientId: number, templateId: number, version: number) => ({
    pk: `CLIENT#${clientId}`,
    sk: `TEMPLATEVERSION#${templateId}#${sortable(version)}`,
  }),
  templateVersionsPrefix: (templateId: number) => `TEMPLATEVERSION#${templateId}#`,
  /** Makes a template's name unique among the client's templates (by its name key) and points at the template. */
  templateName: (clientId: number, nameKey: string) => ({ pk: `CLIENT#${clientId}`, sk: `TEMPLATENAME#${nameKey}` }),

  /** A resource a template put in a tenant (desk, table, flow…), by type and integer id. */
  tenantResource: (tenantId: number, type: string, id: number) => ({ pk: `TENANT#${tenantId}`, sk: `R#${type}#${sortable(id)}` }),
  tenantResourcesPrefix: (type?: string) => (type ? `R#${type}#` : 'R#'),
  /** The tenant's template apply in progress or last finished (a lock and a journal). */
  applyJournal: (tenantId: number) => ({ pk: `TENANT#${tenantId}`, sk: 'APPLY' }),

  agent: (tenantId: number, agentId: number) => ({ pk: `TENANT#${tenantId}`, sk: `AGENT#${sortable(agentId)}` }),
  agentsPrefix: 'AGENT#',
  /** Makes an agent name unique in its tenant (names are the slots connections refer to). */
  agentName: (tenantId: number, nome: string) => ({ pk: `TENANT#${tenantId}`, sk: `AGENTNAME#${nome}` }),
  /** How many agents the tenant has, kept with each creation so the limit holds under concurrency. */
  agentCount: (tenantId: number) => ({ pk: `TENANT#${tenantId}`, sk: 'AGENTCOUNT' }),

  run: (tenantId: number, runId: number) => ({ pk: `TENANT#${tenantId}`, sk: `RUN#${sortable(runId)}` }),
  runsPrefix: 'RUN#',
  /** Index entry listing an agent's runs waiting to be picked up; removed once the agent takes the run. */
  agentPendingRunsIndex: (tenantId: number, agentId: number, runId: number) => ({
    gsi1pk: `AGENT#${tenantId}#${agentId}#PENDING`,
    gsi1sk: sortable(runId),
  }),
  user: (tenantId: number, userId: number) => ({ pk: `TENANT#${tenantId}`, sk: `USER#${sortable(userId)}` }),
  usersPrefix: 'USER#',
  /**
   * Makes a login unique in its tenant and finds its user with one GetItem. Logins compare as a
   * reader sees them (case and width folded, invisible characters dropped: names.ts).
   */
  userLogin: (tenantId: number, login: string) => ({
    pk: `TENANT#${tenantId}`,
    sk: `LOGIN#${foldedText(login)}`,
  }),
  group: (tenantId: number, groupId: number) => ({ pk: `TENANT#${tenantId}`, sk: `GROUP#${sortable(groupId)}` }),
  groupsPrefix: 'GROUP#',
  /** A user in a group; also indexed by user, so deleting a user finds its memberships. */
  membership: (tenantId: number, groupId: number, userId: number) => ({
    pk: `TENANT#${tenantId}`,
    sk: `MEMBER#${sortable(groupId)}#${sortable(userId)}`,
    gsi1pk: `TENANT#${tenantId}#USER#${userId}#GROUPS`,
    gsi1sk: sortable(groupId),
  }),
  membershipsPrefix: (groupId?: number) => (groupId === undefined ? 'MEMBER#' : `MEMBER#${sortable(groupId)}#`),
  userMembershipsIndex: (tenantId: number, userId: number) => `TENANT#${tenantId}#USER#${userId}#GROUPS`,
  /**
   * A datamart is one item collection: its record (`S#DM`, holding its table and owner lists), and
   * the permission records of users and groups on its tables (`P#…`). One Query reads it whole.
   */
  datamartPartition: (tenantId: number, datamartId: number) => `DATAMART#${tenantId}#${datamartId}`,
  datamart: (tenantId: number, datamartId: number) => ({ pk: `DATAMART#${tenantId}#${datamartId}`, sk: 'S#DM' }),
  /** Index entry listing a tenant's datamarts: the records themselves, so a page of them is one Query. */
  datamartsIndex: (tenantId: number, datamartId: number) => ({
    gsi1pk: `TENANT#${tenantId}#DATAMARTS`,
    gsi1sk: sortable(datamartId),
  }),
  datamartStructurePrefix: 'S#',
  /** A table of a datamart, as an earlier version kept it (an item of the collection); read, never written. */
  datamartTable: (tenantId: number, datamartId: number, tableId: number) => ({
    pk: `DATAMART#${tenantId}#${datamartId}`,
    sk: `S#TABLE#${sortable(tableId)}`,
  }),
  /** An owner of a datamart, as an earlier version kept it, also indexed by user so that deleting the user finds it. */
  datamartOwner: (tenantId: number, datamartId: number, userId: number) => ({
    pk: `DATAMART#${tenantId}#${datamartId}`,
    sk: `S#OWNER#${sortable(userId)}`,
    gsi1pk: `TENANT#${tenantId}#OWNER#${userId}`,
    gsi1sk: sortable(datamartId),
  }),
  ownerIndex: (tenantId: number, userId: number) => `TENANT#${tenantId}#OWNER#${userId}`,
  /**
   * The index entry a user gets on becoming a datamart's owner: the tenant's owners, with their
   * names and logins (a projection DynamoDB keeps in step with the user), are one Query.
   */
  datamartOwnersIndex: (tenantId: number, userId: number) => ({
    gsi1pk: `TENANT#${tenantId}#OWNERS`,
    gsi1sk: sortable(userId),
  }),
  datamartOwnersPartition: (tenantId: number) => `TENANT#${tenantId}#OWNERS`,
  /**
   * A user's or group's permission record on one table of a datamart. Also indexed in one partition
   * per tenant, by subject, then datamart, then table: a subject's records, a range of users'
   * records and every group's records are each one Query.
   */
  permission: (tenantId: number, datamartId: number, subject: PermissionSubject, subjectId: number, tableId: number) => ({
    pk: `DATAMART#${tenantId}#${datamartId}`,
    sk: `P#${subjectLetter(subject)}#${sortable(subjectId)}#${sortable(tableId)}`,
    ...permissionIndex(tenantId, datamartId, subject, subjectId, tableId),
  }),
  permissionIndex,
  permissionsPrefix: (subject?: PermissionSubject, subjectId?: number) =>
    subject === undefined ? 'P#' : `P#${subjectLetter(subject)}#${subjectId === undefined ? '' : `${sortable(subjectId)}#`}`,
  tenantPermissionsPartition: (tenantId: number) => `TENANT#${tenantId}#PERMS`,
  /** The sort keys of the tenant's permission index: of one kind of subject, or of one subject. */
  tenantPermissionsPrefix: (subject: PermissionSubject, subjectId?: number) =>
    `${subjectLetter(subject)}#${subjectId === undefined ? '' : `${sortable(subjectId)}#`}`,
  /** Where an earlier version indexed a subject's permission records (one index partition per subject). */
  legacySubjectPermissionsIndex: (tenantId: number, subject: PermissionSubject, subjectId: number) =>
    `TENANT#${tenantId}#PERMS#${subjectLetter(subject)}#${subjectId}`,

  /** A schedule file of a tenant, by the id in its header. */
  schedule: (tenantId: number, scheduleId: number) => ({ pk: `TENANT#${tenantId}`, sk: `SCHEDULE#${sortable(scheduleId)}` }),
  schedulesPrefix: 'SCHEDULE#',
  /**
   * Index entry of an active schedule's next fire time, on one of `dueShards` partitions (so the
   * dispatcher's reads spread and one tick reads only what is due). ISO instants sort as time;
   * within an instant, entries sort by `turn` first (schedule-repository.ts: dueIndexEntry).
   */
  dueSchedulesIndex: (shard: number, nextFireAt: string, turn: number, tenantId: number, scheduleId: number) => ({
    gsi1pk: `SCHEDULES#DUE#${shard}`,
    // `t` before the turn: no key of the earlier shape (instant#tenant#schedule) is a prefix of one of these.
    gsi1sk: `${nextFireAt}#t${sortable(turn)}#${sortable(tenantId)}#${sortable(scheduleId)}`,
  }),
  dueSchedulesShard: (shard: number) => `SCHEDULES#DUE#${shard}`,
  /** Where the dispatcher stopped listing a shard of that index when a tick ran out of time. */
  dispatchCursor: (shard: number) => ({ pk: 'DISPATCHER', sk: `CURSOR#${shard}` }),
  /** The highest number of due-index shards any deployment has written to: the dispatcher lists them all. */
  dispatchShards: () => ({ pk: 'DISPATCHER', sk: 'SHARDS' }),
  /** One fire of a schedule; the key is the slot, so a slot has one run however often it is written. */
  scheduleRun: (tenantId: number, scheduleId: number, slot: string) => ({
    pk: `TENANT#${tenantId}`,
    sk: `SCHEDRUN#${sortable(scheduleId)}#${slot}`,
  }),
  scheduleRunsPrefix: (scheduleId: number) => `SCHEDRUN#${sortable(scheduleId)}#`,

  /** The tenant's settings (alert channels, webhook signing secrets). */
  tenantSettings: (tenantId: number) => ({ pk: `TENANT#${tenantId}`, sk: 'SETTINGS' }),
  alert: (tenantId: number, alertId: number) => ({ pk: `TENANT#${tenantId}`, sk: `ALERT#${sortable(alertId)}` }),
  alertsPrefix: 'ALERT#',
  /** One delivery of an alert (its attempts); also indexed by alert. Expires after 30 days. */
  delivery: (tenantId: number, deliveryId: number, alertId: number) => ({
    pk: `TENANT#${tenantId}`,
    sk: `DELIVERY#${sortable(deliveryId)}`,
    gsi1pk: `TENANT#${tenantId}#ALERT#${alertId}#DELIVERIES`,
    gsi1sk: sortable(deliveryId),
  }),
  deliveryKey: (tenantId: number, deliveryId: number) => ({ pk: `TENANT#${tenantId}`, sk: `DELIVERY#${sortable(deliveryId)}` }),
  alertDeliveriesIndex: (tenantId: number, alertId: number) => `TENANT#${tenantId}#ALERT#${alertId}#DELIVERIES`,
  /** A delivery's payload when small enough for an item (else it is in the payload bucket). */
  deliveryBody: (tenantId: number, deliveryId: number) => ({
    pk: `TENANT#${tenantId}`,
    sk: `DELIVERYBODY#${sortable(deliveryId)}`,
  }),
  /**
   * The tenant's webhook endpoint: its circuit breaker (only while attempts time out or fail to
   * connect) and its attempt slots (one lease per attempt in flight), read together with one Query.
   */
  webhookEndpoint: (tenantId: number) => ({ pk: `TENANT#${tenantId}`, sk: 'WEBHOOK#ENDPOINT' }),
  webhookSlot: (tenantId: number, slot: number) => ({ pk: `TENANT#${tenantId}`, sk: `WEBHOOK#SLOT#${sortable(slot)}` }),
  webhookEndpointPrefix: 'WEBHOOK#',

  /** A BI session opened by the SSO landing, by the SHA-256 of its cookie value. */
  session: (sessionHash: string) => ({ pk: `SESSION#${sessionHash}`, sk: 'SESSION' }),

  /** Marks a queued load as recorded, so a redelivered message never makes a second run. */
  recordedLoad: (tenantId: number, deduplicationId: string) => ({ pk: `TENANT#${tenantId}`, sk: `LOAD#${deduplicationId}` }),

  /**
   * Work a write left to finish (apply a tenant's template, send a delivery, sweep what a deletion
   * left), written in the same transaction as that write and deleted by the one that finishes it;
   * spread over `shards` partitions by tenant, which the follow-up sweeper reads.
   */
  followUp: (shards: number, tenantId: number, kind: string, subjectId: number) => ({
    pk: `FOLLOWUP#${tenantId % shards}`,
    sk: `${kind}#${sortable(tenantId)}#${sortable(subjectId)}`,
  }),
  followUpShard: (shard: number) => `FOLLOWUP#${shard}`,

  /** One per (caller, route, Idempotency-Key); expires after 24 hours. */
  idempotency: (scope: string, keyHash: string) => ({ pk: `${idempotencyPrefix}${scope}#${keyHash}`, sk: 'IDEMPOTENCY' }),
} as const;

const idempotencyPrefix = 'IDEMPOTENCY#';

/** Whether a partition key is an idempotency record's (a transaction tells its failed conditions apart by it). */
export const isIdempotencyRecord = (pk: unknown) => typeof pk === 'string' && pk.startsWith(idempotencyPrefix);
