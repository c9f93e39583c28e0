import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { payloadTooLarge } from '#functions/core/errors.ts';
import {
  allocateIds,
  db,
  getItem,
  nextId,
  putAll,
  queryAll,
  tableName,
  transact,
  type TransactItem,
  writeIf,
} from '#functions/core/store/dynamo.ts';
import { keys } from '#functions/core/store/keys.ts';
import type { TemplateBundle } from './bundle.ts';
import type { IdCounter, ResourceType, StoredOf, StoredResource } from './tenant-resources.ts';

/** A client's template: its name and latest version. Each version's bundle is an item of its own. */
export interface TemplateRecord {
  templateId: number;
  clientId: number;
  nome: string;
  latestVersion: number;
  /** SHA-256 of the latest version's bundle (absent on records of an earlier version of the service). */
  bundleHash?: string;
  createdAt: string;
  updatedAt: string;
}

export interface TemplateVersionSummary {
  version: number;
  nome: string;
  publishedAt: string;
  resources: number;
}

/**
 * A DynamoDB item holds at most 400 KB; bundles of hundreds of resources are stored gzipped
 * (JSON shrinks about tenfold), and one that still does not fit is refused.
 */
const maxStoredBundleBytes = 350 * 1024;

function encodeBundle(bundle: TemplateBundle): Uint8Array {
  const packed = gzipSync(JSON.stringify(bundle));
  if (packed.length > maxStoredBundleBytes) {
    throw payloadTooLarge(
      `The template is too large to store (${packed.length} bytes compressed, at most ${maxStoredBundleBytes})`,
    );
  }
  return packed;
}

const decodeBundle = (packed: Uint8Array): TemplateBundle => JSON.parse(gunzipSync(packed).toString('utf8')) as TemplateBundle;

export const resourceCount = (bundle: TemplateBundle) =>
  [bundle.desks, bundle.tables, bundle.connections, bundle.flows, bundle.applications, bundle.dashboards].reduce(
    (total, list) => total + (list?.length ?? 0),
    0,
  );

function versionItem(clientId: number, templateId: number, version: number, bundle: TemplateBundle, publishedAt: string) {
  return {
    ...keys.templateVersion(clientId, templateId, version),
    templateId,
    version,
    nome: bundle.nome,
    publishedAt,
    resources: resourceCount(bundle),
    bundle: encodeBundle(bundle),
  };
}

export const allocateTemplateId = () => nextId('template');

/** A bundle's fingerprint: a version that publishes the same bundle again is no new version. */
export const bundleHashOf = (bundle: TemplateBundle) => createHash('sha256').update(JSON.stringify(bundle)).digest('hex');

/** A new template's record: version 1, published now. */
export function newTemplateRecord(clientId: number, templateId: number, bundle: TemplateBundle): TemplateRecord {
  const now = new Date().toISOString();
  const nome = bundle.nome;
  return { templateId, clientId, nome, latestVersion: 1, bundleHash: bundleHashOf(bundle), createdAt: now, updatedAt: now };
}

/** Version 1 of a new template, with its record and `alongside`, in one transaction. */
export async function insertTemplate(
  clientId: number,
  templateId: number,
  bundle: TemplateBundle,
  alongside: readonly TransactItem[],
): Promise<TemplateRecord> {
  const record = newTemplateRecord(clientId, templateId, bundle);
  const written = await transact([
    {
      Put: {
        TableName: tableName(),
        Item: { ...record, ...keys.template(clientId, templateId) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: versionItem(clientId, templateId, 1, bundle, record.createdAt),
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    ...alongside,
  ]);
  if (!written) throw new Error(`Template ${templateId} already exists`);
  return record;
}

/** The next version; `undefined` when another publish took that version number first. */
export async function insertNextVersion(template: TemplateRecord, bundle: TemplateBundle): Promise<TemplateRecord | undefined> {
  const now = new Date().toISOString();
  const version = template.latestVersion + 1;
  const written = await transact([
    {
      Update: {
        TableName: tableName(),
        Key: keys.template(template.clientId, template.templateId),
        UpdateExpression: 'SET latestVersion = :version, nome = :nome, bundleHash = :hash, updatedAt = :now',
        ConditionExpression: 'latestVersion = :previous',
        ExpressionAttributeValues: {
          ':version': version,
          ':previous': template.latestVersion,
          ':nome': bundle.nome,
          ':hash': bundleHashOf(bundle),
          ':now': now,
        },
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: versionItem(template.clientId, template.templateId, version, bundle, now),
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ]);
  return written
    ? { ...template, nome: bundle.nome, latestVersion: version, bundleHash: bundleHashOf(bundle), updatedAt: now }
    : undefined;
}

export async function findTemplate(clientId: number, templateId: number): Promise<TemplateRecord | undefined> {
  return getItem<TemplateRecord>(keys.template(clientId, templateId));
}

/** Whether `templateId` is a template published by this client (templates are client-scoped). */
export async function templateExists(clientId: number, templateId: number): Promise<boolean> {
  return (await findTemplate(clientId, templateId)) !== undefined;
}

export function listClientTemplates(clientId: number): Promise<TemplateRecord[]> {
  return queryAll<TemplateRecord>(keys.client(clientId).pk, keys.templatesPrefix);
}

export function listVersions(clientId: number, templateId: number): Promise<TemplateVersionSummary[]> {
  return queryAll<TemplateVersionSummary>(keys.client(clientId).pk, keys.templateVersionsPrefix(templateId), {
    projection: 'version, nome, publishedAt, resources',
  });
}

export async function loadVersionBundle(
  clientId: number,
  templateId: number,
  version: number,
): Promise<TemplateBundle | undefined> {
  const result = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: keys.templateVersion(clientId, templateId, version),
      ProjectionExpression: 'bundle',
    }),
  );
  return result.Item ? decodeBundle(result.Item.bundle as Uint8Array) : undefined;
}

/** The client's default template (applied to new tenants created without `templateId`); null clears it. */
export async function storeDefaultTemplate(clientId: number, templateId: number | null): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.client(clientId),
      UpdateExpression: templateId === null ? 'REMOVE defaultTemplateId' : 'SET defaultTemplateId = :templateId',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: templateId === null ? undefined : { ':templateId': templateId },
    }),
  );
}

/** A tenant's template apply in progress or last finished: its lock, and what it left pending. */
export interface ApplyJournal {
  state: 'in_progress' | 'done';
  lockId: string;
  lockedUntil: number;
  templateId: number;
  version: number;
  /**
   * Tables created or rebuilt whose reload plan has not been handed to the tenant yet: by an
   * apply that failed half-way, or by the apply on creation (whose answer is the tenant, not a
   * plan). The next apply's plan covers them.
   */
  pendingTables: string[];
}

export async function findApplyJournal(tenantId: number): Promise<ApplyJournal | undefined> {
  return getItem<ApplyJournal>(keys.applyJournal(tenantId));
}

/**
 * Writes a new journal (taking the apply lock) if the one read before, `previous`, is still
 * there unchanged (or, without one, if there is still none); `false` when another apply took it.
 */
export function replaceApplyJournal(
  tenantId: number,
  journal: ApplyJournal,
  previous: ApplyJournal | undefined,
): Promise<boolean> {
  return writeIf(() =>
    db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.applyJournal(tenantId), ...journal },
        ConditionExpression: previous ? 'lockId = :previousLock' : 'attribute_not_exists(pk)',
        ExpressionAttributeValues: previous ? { ':previousLock': previous.lockId } : undefined,
      }),
    ),
  );
}

/** Sets the tables the apply holding `lockId` leaves pending. */
export async function recordPendingTables(tenantId: number, lockId: string, pendingTables: string[]): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.applyJournal(tenantId),
      UpdateExpression: 'SET pendingTables = :pending',
      ConditionExpression: 'lockId = :lockId',
      ExpressionAttributeValues: { ':pending': pendingTables, ':lockId': lockId },
    }),
  );
}

/**
 * The tenant records the version it now has (and no longer waits for it, when it was its pending
 * template), the journal of the apply holding `lockId` closes (keeping `stillPending`), and
 * `alongside` commits (the caller's answer, the end of a follow-up), together; `false` when the
 * tenant is gone or deleted.
 */
export function finishApplyJournal(
  tenantId: number,
  lockId: string,
  { templateId, version }: { templateId: number; version: number },
  stillPending: string[],
  alongside: readonly TransactItem[],
): Promise<boolean> {
  return transact([
    {
      Update: {
        TableName: tableName(),
        Key: keys.tenant(tenantId),
        UpdateExpression: 'SET appliedTemplate = :applied REMOVE pendingTemplate',
        ConditionExpression:
          'attribute_exists(pk) AND attribute_not_exists(deletedAt) AND ' +
          '(attribute_not_exists(pendingTemplate) OR pendingTemplate.templateId = :templateId)',
        ExpressionAttributeValues: {
          ':applied': { templateId, version, appliedAt: new Date().toISOString() },
          ':templateId': templateId,
        },
      },
    },
    {
      Update: {
        TableName: tableName(),
        Key: keys.applyJournal(tenantId),
        UpdateExpression: 'SET #state = :done, pendingTables = :pending, lockedUntil = :zero',
        ConditionExpression: 'lockId = :lockId',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':done': 'done', ':pending': stillPending, ':zero': 0, ':lockId': lockId },
      },
    },
    ...alongside,
  ]);
}

/** Lets the next apply start at once, if the apply holding `lockId` still holds the lock (the journal stays in progress). */
export async function releaseApplyLock(tenantId: number, lockId: string): Promise<void> {
  // Another apply holding the lock now is left alone.
  await writeIf(() =>
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.applyJournal(tenantId),
        UpdateExpression: 'SET lockedUntil = :zero',
        ConditionExpression: 'lockId = :lockId',
        ExpressionAttributeValues: { ':zero': 0, ':lockId': lockId },
      }),
    ),
  );
}

/** New ids for the tenant's resources, as many of each counter as `needs` says (one round trip per counter, in parallel). */
export async function allocateResourceIds(
  tenantId: number,
  needs: Record<IdCounter, number>,
): Promise<Record<IdCounter, number[]>> {
  const entries = await Promise.all(
    (Object.entries(needs) as [IdCounter, number][]).map(
      async ([counter, count]) => [counter, await allocateIds(keys.tenantCounter(tenantId, counter), count)] as const,
    ),
  );
  return Object.fromEntries(entries) as Record<IdCounter, number[]>;
}

/** The resources templates put in the tenant. */
export function loadResources(tenantId: number): Promise<StoredResource[]> {
  return queryAll<StoredResource>(keys.tenant(tenantId).pk, keys.tenantResourcesPrefix());
}

export function loadResourcesOfType<T extends ResourceType>(tenantId: number, type: T): Promise<StoredOf<T>[]> {
  return queryAll<StoredOf<T>>(keys.tenant(tenantId).pk, keys.tenantResourcesPrefix(type));
}

export function writeResources(resources: readonly StoredResource[]): Promise<void> {
  return putAll(
    resources.map((resource) => ({ ...resource, ...keys.tenantResource(resource.tenantId, resource.type, resource.id) })),
  );
}
