import { outsideAuditScope } from '#functions/core/audit/audit-scope.ts';
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { clientCountKey } from '#functions/core/clients/client-repository.ts';
import { maxTemplatesPerClient, maxVersionsPerTemplate } from '#functions/core/clients/quotas.ts';
import { payloadTooLarge } from '#functions/core/errors.ts';
import { claimWrites } from '#functions/core/store/claims.ts';
import { countedTransaction } from '#functions/core/store/counts.ts';
import {
  db,
  deleteAll,
  getAll,
  getItem,
  nextId,
  type Page,
  putAll,
  queryAll,
  queryFirst,
  queryList,
  tableName,
  writeItem,
} from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import { type Alongside, type AlongsideName, type Transaction, transaction } from '#functions/core/store/transaction.ts';
import type { TemplateBundle } from './bundle.ts';
import type { TenantRecord } from '#functions/core/tenants/tenant-repository.ts';
import { type IdCounter, idCounters, type ResourceType, type StoredOf, type StoredResource } from './tenant-resources.ts';

/** A client's template: its name and latest version. Each version's bundle is an item of its own. */
export interface TemplateRecord {
  templateId: number;
  clientId: number;
  nome: string;
  latestVersion: number;
  /** SHA-256 of the latest version's bundle (`bundleHashOf`). */
  bundleHash: string;
  /** The template's rollout that runs or is paused (rollouts/rollouts.ts): one at a time. Left by one that ended, until the next. */
  activeRolloutId?: number;
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
    ...stored.templateVersion.key({ clientId, templateId, version }),
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

/** The claim that makes a name unique among the client's templates, pointing at the template. */
const nameClaims = claimWrites(stored.templateName, stored.template);

/** The template that holds a name among the client's templates, if one does (by its claim). */
export function findTemplateNamed(clientId: number, nome: string): Promise<number | undefined> {
  return nameClaims.holderOf({ clientId, nome });
}

/**
 * Claims a template's name for it unless the name is claimed (migration 4: templates published
 * before names were claimed); `false` when a claim was there, this template's or another's.
 */
export function claimTemplateName(clientId: number, templateId: number, nome: string): Promise<boolean> {
  return nameClaims.takeAlone({ clientId, nome }, templateId);
}

/** Commits `tx` with a change to the client's count of templates (clients/quotas.ts): +1 for a publication, -1 for a deletion. */
const templatesWrite = <Name extends string>(clientId: number, delta: 1 | -1, max: number, tx: Transaction<Name>) =>
  countedTransaction(clientCountKey(clientId, 'TEMPLATES'), { delta, max }, tx);

/**
 * Version 1 of a new template, with its record, the claim on its name and `alongside`, in one
 * transaction that also adds it to the client's count of templates, conditioned on staying within
 * `max`; `name_taken` when another template of the client has the name, `limit` when the client
 * has `max` templates already (nothing written either way).
 */
export async function insertTemplate(
  clientId: number,
  templateId: number,
  bundle: TemplateBundle,
  alongside: Alongside,
  max = maxTemplatesPerClient,
): Promise<'written' | 'name_taken' | 'limit'> {
  const record = newTemplateRecord(clientId, templateId, bundle);
  const tx = transaction<'nameClaim' | 'template' | 'version' | AlongsideName>()
    .add('nameClaim', ...nameClaims.take({ clientId, nome: bundle.nome }, templateId))
    .add('template', {
      Put: {
        TableName: tableName(),
        Item: { ...record, ...stored.template.key({ clientId, templateId }) },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    })
    .add('version', {
      Put: {
        TableName: tableName(),
        Item: versionItem(clientId, templateId, 1, bundle, record.createdAt),
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    })
    .include(alongside);
  const outcome = await templatesWrite(clientId, 1, max, tx);
  if (outcome.written) return 'written';
  if ('limit' in outcome) return 'limit';
  if (outcome.failed.has('nameClaim')) return 'name_taken';
  throw new Error(`Template ${templateId} already exists`);
}

/**
 * The next version, its name claim moved with it when the name changes; `version_taken` when
 * another publish took that version number first, `name_taken` when another template has the name,
 * `limit` when the template has `max` versions already. The record's `latestVersion` is its number
 * of versions (they go only with the template), so the update that advances it is what refuses a
 * version past `max`, in its own condition.
 */
export async function insertNextVersion(
  template: TemplateRecord,
  bundle: TemplateBundle,
  max = maxVersionsPerTemplate,
): Promise<TemplateRecord | 'version_taken' | 'name_taken' | 'limit'> {
  const now = new Date().toISOString();
  const version = template.latestVersion + 1;
  const renamed = !nameClaims.same(template, { clientId: template.clientId, nome: bundle.nome });
  const tx = transaction<'nameClaim' | 'oldNameClaim' | 'template' | 'version'>();
  if (renamed) {
    tx.add('nameClaim', ...nameClaims.take({ clientId: template.clientId, nome: bundle.nome }, template.templateId));
    tx.add('oldNameClaim', nameClaims.release(template, template.templateId));
  }
  const outcome = await tx
    .add('template', {
      Update: {
        TableName: tableName(),
        Key: stored.template.key(template),
        UpdateExpression: 'SET latestVersion = :version, nome = :nome, bundleHash = :hash, updatedAt = :now',
        ConditionExpression: 'latestVersion = :previous AND latestVersion < :max',
        ExpressionAttributeValues: {
          ':version': version,
          ':previous': template.latestVersion,
          ':max': max,
          ':nome': bundle.nome,
          ':hash': bundleHashOf(bundle),
          ':now': now,
        },
      },
    })
    .add('version', {
      Put: {
        TableName: tableName(),
        Item: versionItem(template.clientId, template.templateId, version, bundle, now),
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    })
    .commit();
  if (outcome.written) {
    return { ...template, nome: bundle.nome, latestVersion: version, bundleHash: bundleHashOf(bundle), updatedAt: now };
  }
  // The record's condition failed at the version read: that version is the last one a template may have.
  if (outcome.failed.has('template') && template.latestVersion >= max) return 'limit';
  return outcome.failed.has('nameClaim') ? 'name_taken' : 'version_taken';
}

/**
 * Deletes the template's record and its name claim, still at the version read and while it is not
 * the client's default, with the follow-up that sweeps its versions, in one transaction that also
 * takes it off the client's count of templates (its place is free); `false` when it changed or
 * became the default meanwhile.
 */
export async function deleteTemplateRecord(template: TemplateRecord, alongside: Alongside): Promise<boolean> {
  const { clientId, templateId } = template;
  const tx = transaction<'notDefault' | 'template' | 'nameClaim' | AlongsideName>()
    .add('notDefault', {
      ConditionCheck: {
        TableName: tableName(),
        Key: stored.client.key({ clientId }),
        ConditionExpression: 'attribute_not_exists(defaultTemplateId) OR defaultTemplateId <> :templateId',
        ExpressionAttributeValues: { ':templateId': templateId },
      },
    })
    .add('template', {
      Delete: {
        TableName: tableName(),
        Key: stored.template.key({ clientId, templateId }),
        // Still at the version read, and with the rollout mark read (none, or one that ended): a rollout that
        // started since holds the template.
        ConditionExpression:
          template.activeRolloutId === undefined
            ? 'latestVersion = :seen AND attribute_not_exists(activeRolloutId)'
            : 'latestVersion = :seen AND activeRolloutId = :rollout',
        ExpressionAttributeValues: {
          ':seen': template.latestVersion,
          ...(template.activeRolloutId === undefined ? {} : { ':rollout': template.activeRolloutId }),
        },
      },
    })
    .add('nameClaim', nameClaims.release(template, templateId))
    .include(alongside);
  const outcome = await templatesWrite(clientId, -1, Number.MAX_SAFE_INTEGER, tx);
  return outcome.written;
}

/** Deletes every stored version of a deleted template. */
export async function deleteTemplateVersions(clientId: number, templateId: number): Promise<void> {
  await deleteAll(
    await queryAll<{ pk: string; sk: string }>(
      stored.templateVersion.partition({ clientId }),
      stored.templateVersion.keyPrefix({ templateId }),
      { projection: 'pk, sk' },
    ),
  );
}

export async function findTemplate(clientId: number, templateId: number): Promise<TemplateRecord | undefined> {
  return getItem<TemplateRecord>(stored.template.key({ clientId, templateId }));
}

/**
 * Gives a record an earlier version stored without its latest version's hash that hash, if it is
 * still the record read (the same latest version, not updated since); `false` when it is not.
 */
export function storeBundleHash(
  template: Pick<TemplateRecord, 'clientId' | 'templateId' | 'latestVersion' | 'updatedAt'>,
  bundleHash: string,
): Promise<boolean> {
  return writeItem({
    Update: {
      TableName: tableName(),
      Key: stored.template.key(template),
      UpdateExpression: 'SET bundleHash = :hash',
      ConditionExpression: 'latestVersion = :version AND updatedAt = :updatedAt AND attribute_not_exists(bundleHash)',
      ExpressionAttributeValues: { ':hash': bundleHash, ':version': template.latestVersion, ':updatedAt': template.updatedAt },
    },
  });
}

/** Whether `templateId` is a template published by this client (templates are client-scoped). */
export async function templateExists(clientId: number, templateId: number): Promise<boolean> {
  return (await findTemplate(clientId, templateId)) !== undefined;
}

/** The client's templates, by id: all of them, or a page of `limit` (the client's template quota bounds the whole list). */
export function listClientTemplates(
  clientId: number,
  limit: number | undefined,
  cursor: string | undefined,
): Promise<Page<TemplateRecord>> {
  return queryList<TemplateRecord>({
    partition: stored.template.partition({ clientId }),
    prefix: stored.template.keyPrefix({}),
    limit,
    cursor,
  });
}

export function listVersions(clientId: number, templateId: number): Promise<TemplateVersionSummary[]> {
  return queryAll<TemplateVersionSummary>(
    stored.templateVersion.partition({ clientId }),
    stored.templateVersion.keyPrefix({ templateId }),
    { projection: 'version, nome, publishedAt, resources' },
  );
}

export async function loadVersionBundle(
  clientId: number,
  templateId: number,
  version: number,
): Promise<TemplateBundle | undefined> {
  const result = await db().send(
    new GetCommand({
      TableName: tableName(),
      Key: stored.templateVersion.key({ clientId, templateId, version }),
      ProjectionExpression: 'bundle',
    }),
  );
  return result.Item ? decodeBundle(result.Item.bundle as Uint8Array) : undefined;
}

/**
 * The client's default template (applied to new tenants created without `templateId`); null clears
 * it. The template must still exist when it is set (a deletion meanwhile cannot leave a default
 * that names nothing): `false` otherwise.
 */
export async function storeDefaultTemplate(clientId: number, templateId: number | null): Promise<boolean> {
  const tx = transaction<'template' | 'client'>();
  if (templateId !== null) {
    tx.add('template', {
      ConditionCheck: {
        TableName: tableName(),
        Key: stored.template.key({ clientId, templateId }),
        ConditionExpression: 'attribute_exists(pk)',
      },
    });
  }
  const outcome = await tx
    .add('client', {
      Update: {
        TableName: tableName(),
        Key: stored.client.key({ clientId }),
        UpdateExpression: templateId === null ? 'REMOVE defaultTemplateId' : 'SET defaultTemplateId = :templateId',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: templateId === null ? undefined : { ':templateId': templateId },
      },
    })
    .commit();
  return outcome.written;
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

/** The attribute of the journal item holding the last id a counter gave (the journal keeps the resource ids' counters). */
const lastIdAttribute = (counter: IdCounter) => `lastId_${counter}`;

/** What an apply reads before it takes the lock, in one batch read: the tenant and its journal. */
export async function readApplyState(
  tenantId: number,
): Promise<{ tenant: TenantRecord | undefined; journal: ApplyJournal | undefined }> {
  const items = await getAll<Record<string, unknown> & { pk: string; sk: string }>([
    stored.tenant.key({ tenantId }),
    stored.applyJournal.key({ tenantId }),
  ]);
  const find = (key: { pk: string; sk: string }) => items.find((item) => item.pk === key.pk && item.sk === key.sk);
  return {
    tenant: find(stored.tenant.key({ tenantId })) as TenantRecord | undefined,
    journal: find(stored.applyJournal.key({ tenantId })) as ApplyJournal | undefined,
  };
}

/**
 * Takes the apply lock, writing the new journal, if the one read before, `previous`, is still
 * there unchanged (or, without one, if there is still none), and in the same request gives the
 * new resource ids the apply needs (`needs`, per counter; a counter the journal does not have yet
 * starts from 0). Returns the ids, or `undefined` when another apply took the lock.
 */
export async function claimApplyJournal(
  tenantId: number,
  journal: ApplyJournal,
  previous: ApplyJournal | undefined,
  needs: Record<IdCounter, number>,
): Promise<Record<IdCounter, number[]> | undefined> {
  const counted = idCounters.filter((counter) => needs[counter] > 0);
  const names: Record<string, string> = { '#state': 'state', '#version': 'version' };
  const values: Record<string, unknown> = {
    ':state': journal.state,
    ':lockId': journal.lockId,
    ':lockedUntil': journal.lockedUntil,
    ':templateId': journal.templateId,
    ':version': journal.version,
    ':pending': journal.pendingTables,
    ...(previous ? { ':previousLock': previous.lockId } : {}),
    ...(counted.length > 0 ? { ':zero': 0 } : {}),
  };
  const counters = counted.map((counter, index) => {
    names[`#c${index}`] = lastIdAttribute(counter);
    values[`:count${index}`] = needs[counter];
    return `#c${index} = if_not_exists(#c${index}, :zero) + :count${index}`;
  });
  let result;
  try {
    result = await outsideAuditScope(() =>
      db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: stored.applyJournal.key({ tenantId }),
          UpdateExpression: [
            'SET #state = :state, lockId = :lockId, lockedUntil = :lockedUntil, templateId = :templateId',
            '#version = :version, pendingTables = :pending',
            ...counters,
          ].join(', '),
          ConditionExpression: previous ? 'lockId = :previousLock' : 'attribute_not_exists(pk)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
  return Object.fromEntries(
    idCounters.map((counter) => {
      const last = Number(result.Attributes?.[lastIdAttribute(counter)] ?? 0);
      return [counter, Array.from({ length: needs[counter] }, (_, index) => last - needs[counter] + 1 + index)];
    }),
  ) as Record<IdCounter, number[]>;
}

/**
 * Starts a resource id counter in the tenant's journal at `lastId` (the last id an earlier version's
 * counter item gave), unless the journal has that counter already: an apply started it from that
 * same item, and has given ids past it since. `false` when the tenant has no journal.
 */
export function startJournalCounter(tenantId: number, counter: IdCounter, lastId: number): Promise<boolean> {
  return writeItem({
    Update: {
      TableName: tableName(),
      Key: stored.applyJournal.key({ tenantId }),
      UpdateExpression: 'SET #counter = if_not_exists(#counter, :lastId)',
      ConditionExpression: 'attribute_exists(lockId)',
      ExpressionAttributeNames: { '#counter': lastIdAttribute(counter) },
      ExpressionAttributeValues: { ':lastId': lastId },
    },
  });
}

/**
 * Deletes the item an earlier version kept a resource id counter in, if it still holds `lastId`
 * (or is gone already); `false` when it holds another value.
 */
export function deleteEarlierCounter(tenantId: number, counter: IdCounter, lastId: number): Promise<boolean> {
  return writeItem({
    Delete: {
      TableName: tableName(),
      Key: stored.tenantIdCounter.key({ tenantId, name: counter }),
      ConditionExpression: 'attribute_not_exists(pk) OR #value = :lastId',
      ExpressionAttributeNames: { '#value': 'value' },
      ExpressionAttributeValues: { ':lastId': lastId },
    },
  });
}

/** The latest version of a client's template, with its bundle: one Query of its versions, newest first. */
export async function findLatestVersion(
  clientId: number,
  templateId: number,
): Promise<{ version: number; bundle: TemplateBundle } | undefined> {
  const latest = await queryFirst<{ version: number; bundle: Uint8Array }>({
    partition: stored.templateVersion.partition({ clientId }),
    prefix: stored.templateVersion.keyPrefix({ templateId }),
    newestFirst: true,
  });
  return latest ? { version: latest.version, bundle: decodeBundle(latest.bundle) } : undefined;
}

/**
 * The tenant records the version it now has (and no longer waits for it, when it was its pending
 * template), the journal of the apply holding `lockId` closes (keeping `stillPending`), and
 * `alongside` commits (the caller's answer, the end of a follow-up), together; `false` when the
 * tenant is gone or deleted.
 */
export async function finishApplyJournal(
  tenantId: number,
  lockId: string,
  { templateId, version }: { templateId: number; version: number },
  stillPending: string[],
  alongside: Alongside,
): Promise<boolean> {
  const outcome = await transaction<'tenant' | 'journal' | AlongsideName>()
    .add('tenant', {
      Update: {
        TableName: tableName(),
        Key: stored.tenant.key({ tenantId }),
        UpdateExpression: 'SET appliedTemplate = :applied REMOVE pendingTemplate',
        ConditionExpression:
          'attribute_exists(pk) AND attribute_not_exists(deletedAt) AND ' +
          '(attribute_not_exists(pendingTemplate) OR pendingTemplate.templateId = :templateId)',
        ExpressionAttributeValues: {
          ':applied': { templateId, version, appliedAt: new Date().toISOString() },
          ':templateId': templateId,
        },
      },
    })
    .add('journal', {
      Update: {
        TableName: tableName(),
        Key: stored.applyJournal.key({ tenantId }),
        UpdateExpression: 'SET #state = :done, pendingTables = :pending, lockedUntil = :zero',
        ConditionExpression: 'lockId = :lockId',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':done': 'done', ':pending': stillPending, ':zero': 0, ':lockId': lockId },
      },
    })
    .include(alongside)
    .commit();
  return outcome.written;
}

/** Lets the next apply start at once, if the apply holding `lockId` still holds the lock (the journal stays in progress). */
export async function releaseApplyLock(tenantId: number, lockId: string): Promise<void> {
  // Another apply holding the lock now is left alone.
  await writeItem({
    Update: {
      TableName: tableName(),
      Key: stored.applyJournal.key({ tenantId }),
      UpdateExpression: 'SET lockedUntil = :zero',
      ConditionExpression: 'lockId = :lockId',
      ExpressionAttributeValues: { ':zero': 0, ':lockId': lockId },
    },
  });
}

/** The resources templates put in the tenant. */
export function loadResources(tenantId: number): Promise<StoredResource[]> {
  return queryAll<StoredResource>(stored.tenantResource.partition({ tenantId }), stored.tenantResource.keyPrefix({}));
}

export function loadResourcesOfType<T extends ResourceType>(tenantId: number, type: T): Promise<StoredOf<T>[]> {
  return queryAll<StoredOf<T>>(stored.tenantResource.partition({ tenantId }), stored.tenantResource.keyPrefix({ type }));
}

/** Under the apply's journal lock: the transaction that closes the journal carries the apply's audit record. */
export function writeResources(resources: readonly StoredResource[]): Promise<void> {
  return outsideAuditScope(() => putAll(resources.map((resource) => ({ ...resource, ...stored.tenantResource.key(resource) }))));
}
