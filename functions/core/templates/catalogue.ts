import { badRequest, conflict, notFound } from '#functions/core/errors.ts';
import { type Resumable, unrecorded } from '#functions/core/store/resumable.ts';
import { checkBundle, type TemplateBundle } from './bundle.ts';
import {
  allocateTemplateId,
  bundleHashOf,
  newTemplateRecord,
  findTemplate,
  insertNextVersion,
  insertTemplate,
  listClientTemplates,
  listVersions,
  loadVersionBundle,
  storeDefaultTemplate,
  type TemplateRecord,
} from './template-repository.ts';

export const templateNotFound = () => notFound('Template not found');

/** The rules beyond the schema (unique keys, resolvable references, no flow cycles), as one 400. */
function assertPublishable(bundle: TemplateBundle): void {
  const errors = checkBundle(bundle);
  const [first] = errors;
  if (first) throw badRequest(`Invalid template: ${first.pointer} ${first.message}`, errors, 'invalid_template');
}

const published = (template: TemplateRecord) => ({
  id: template.templateId,
  nome: template.nome,
  version: template.latestVersion,
});

/** A published template version as the API shows it. */
export type PublishedTemplate = ReturnType<typeof published>;

/** POST /tenants/templates: a new template, version 1, with the request's answer in the same commit. */
export async function publishTemplate(
  clientId: number,
  bundle: TemplateBundle,
  record: Resumable<PublishedTemplate> = unrecorded(),
): Promise<PublishedTemplate> {
  assertPublishable(bundle);
  const templateId = await allocateTemplateId();
  const answer = published(newTemplateRecord(clientId, templateId, bundle));
  await insertTemplate(clientId, templateId, bundle, record.finish(answer));
  return answer;
}

/**
 * PUT /tenants/templates/{id}: the template's next version. The latest version's bundle sent again
 * (a retry whose answer was lost, say) is no new version: the answer names the latest one.
 */
export async function publishNextVersion(clientId: number, templateId: number, bundle: TemplateBundle) {
  assertPublishable(bundle);
  for (let attempt = 0; attempt < 3; attempt++) {
    const template = await findTemplate(clientId, templateId);
    if (!template) throw templateNotFound();
    if (await isLatestBundle(template, bundle)) return published(template);
    const next = await insertNextVersion(template, bundle);
    if (next) return published(next);
  }
  throw conflict('Another version of this template was published at the same time; retry');
}

async function isLatestBundle(template: TemplateRecord, bundle: TemplateBundle): Promise<boolean> {
  if (template.bundleHash) return template.bundleHash === bundleHashOf(bundle);
  // A record of an earlier version of the service has no hash: compare with the stored bundle.
  const latest = await loadVersionBundle(template.clientId, template.templateId, template.latestVersion);
  return JSON.stringify(latest) === JSON.stringify(bundle);
}

/** GET /tenants/templates/{id}: the latest version's bundle and the version history. */
export async function describeTemplate(clientId: number, templateId: number) {
  const template = await findTemplate(clientId, templateId);
  if (!template) throw templateNotFound();
  const [bundle, versions] = await Promise.all([
    loadVersionBundle(clientId, templateId, template.latestVersion),
    listVersions(clientId, templateId),
  ]);
  return { ...published(template), bundle, versions };
}

/** GET /tenants/templates (spec 4.2): exactly `{id, nome}` per template of the client. */
export async function listTemplates(clientId: number) {
  return (await listClientTemplates(clientId)).map((template) => ({ id: template.templateId, nome: template.nome }));
}

/** PUT /tenants/templates/default: a template of the client, or null for none. */
export async function setDefaultTemplate(clientId: number, templateId: number | null) {
  if (templateId !== null && !(await findTemplate(clientId, templateId))) throw templateNotFound();
  await storeDefaultTemplate(clientId, templateId);
  return { templateId };
}

/** The latest version of a client's template, for applying it. */
export async function latestTemplateVersion(clientId: number, templateId: number) {
  const template = await findTemplate(clientId, templateId);
  const bundle = template && (await loadVersionBundle(clientId, templateId, template.latestVersion));
  if (!template || !bundle) throw templateNotFound();
  return { template, version: template.latestVersion, bundle };
}
