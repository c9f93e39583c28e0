/**
 * Migration 3: templates and apply journals in the shape this release reads. Earlier versions
 * stored a template's record without the hash of its latest version's bundle (publishing compares a
 * bundle sent again with it), and kept the counters of a tenant's resource ids one item each
 * (`COUNTER#desk`, …), where the journal now keeps them (`lastId_desk`, …). A record gets the hash
 * of its latest version's stored bundle, conditional on the record as read. A counter item's value
 * goes into the journal unless the journal has that counter already (an apply that started it
 * there started it from the item), and only then is the item deleted, so a run stopped between the
 * two finds the item again and repeats both.
 */
import * as stored from '#functions/core/store/entity-declarations.ts';
import type { Migration } from '#functions/core/store/migrations.ts';
import {
  bundleHashOf,
  deleteEarlierCounter,
  findTemplate,
  loadVersionBundle,
  startJournalCounter,
  storeBundleHash,
  type TemplateRecord,
} from '#functions/core/templates/template-repository.ts';
import { type IdCounter, idCounters } from '#functions/core/templates/tenant-resources.ts';

/** A record changed by a request while it migrates is read again, this many times at most. */
const attempts = 5;

const counterKey = stored.tenantIdCounter.declaration.key;

export const templatesInCurrentShape: Migration = {
  version: 3,
  name: 'templates-in-current-shape',
  selects: [
    { entity: stored.template, where: { expression: 'attribute_not_exists(bundleHash)' } },
    // The counter items of resource ids, by name (another counter whose name starts with one is left alone).
    ...idCounters.map((name) => ({ entity: stored.tenantIdCounter, key: { name } })),
  ],
  async migrate(item) {
    const { pk, sk } = item as { pk: string; sk: string };
    const tenantId = counterKey.pk.match(pk)?.tenantId;
    const counter = counterKey.sk.match(sk)?.name;
    if (tenantId !== undefined && counter !== undefined) {
      if (!(idCounters as readonly string[]).includes(counter)) return;
      await moveCounter(Number(tenantId), counter as IdCounter, Number(item.value));
      return;
    }
    const { clientId, templateId } = item as unknown as TemplateRecord;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (await hashTemplate(clientId, templateId)) return;
    }
    throw new Error(`Template ${templateId} of client ${clientId} kept changing while it migrated: the next run takes it again`);
  },
};

/** A record as an earlier version may have stored it. */
type EarlierTemplateRecord = Omit<TemplateRecord, 'bundleHash'> & { bundleHash?: string };

/** Gives the record its hash, computed as publishing does; false when a request changed the record meanwhile. */
async function hashTemplate(clientId: number, templateId: number): Promise<boolean> {
  const template: EarlierTemplateRecord | undefined = await findTemplate(clientId, templateId);
  // Gone, or published again (every publication writes the hash) since the Scan read it.
  if (!template || template.bundleHash !== undefined) return true;
  const bundle = await loadVersionBundle(clientId, templateId, template.latestVersion);
  // A version is written in its record's transaction, and deleted only once the record is gone.
  if (!bundle) throw new Error(`Template ${templateId} of client ${clientId} has no version ${template.latestVersion}`);
  return storeBundleHash(template, bundleHashOf(bundle));
}

/** The counter's last id into the tenant's journal, then its item deleted. */
async function moveCounter(tenantId: number, counter: IdCounter, lastId: number): Promise<void> {
  // Every version wrote the journal (taking the apply lock) before it gave the apply's first id.
  if (!(await startJournalCounter(tenantId, counter, lastId))) {
    throw new Error(`Tenant ${tenantId} has a ${counter} counter item but no apply journal to keep it`);
  }
  // Conditional on the value read, which no release changes any more: another value stops the run.
  if (!(await deleteEarlierCounter(tenantId, counter, lastId))) {
    throw new Error(`The ${counter} counter item of tenant ${tenantId} changed while it migrated: the next run takes it again`);
  }
}
