import { checkIfMatch, etagOf } from '#functions/core/api/if-match.ts';
import { findClient } from '#functions/core/clients/client-repository.ts';
import { maxTemplatesPerClient, maxVersionsPerTemplate } from '#functions/core/clients/quotas.ts';
import { badRequest, conflict, notFound, type ServiceError } from '#functions/core/errors.ts';
import { deleteFollowUp, recordFollowUp } from '#functions/core/follow-ups/follow-up-repository.ts';
import { findRollout } from '#functions/core/rollouts/rollout-repository.ts';
import { mapPage } from '#functions/core/store/dynamo.ts';
import { type Resumable, unrecorded } from '#functions/core/store/resumable.ts';
import { checkBundle, type TemplateBundle } from './bundle.ts';
import {
  allocateTemplateId,
  bundleHashOf,
  deleteTemplateRecord,
  deleteTemplateVersions,
  findLatestVersion,
  findTemplateNamed,
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

export const templateNotFound = () => notFound('Template not found', 'template_not_found');
export const templateVersionNotFound = (version: number) =>
  notFound(`The template has no version ${version}`, 'template_version_not_found');

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

/**
 * 409 naming the template that already has this name (its claim's holder): one name, one template
 * (new versions of it go through its PUT).
 */
async function nameTaken(clientId: number, nome: string, except?: number): Promise<ServiceError | undefined> {
  const holder = await findTemplateNamed(clientId, nome);
  if (holder === undefined || holder === except) return undefined;
  return conflict(
    `The client already has a template named ${JSON.stringify(nome)} (id ${holder}); publish a new version of it with PUT /tenants/templates/${holder}`,
    'template_name_taken',
    [{ location: 'body', pointer: '/nome', message: `is the name of template ${holder}` }],
  );
}

/**
 * POST /tenants/templates: a new template, version 1, with the request's answer in the same commit.
 * Its name must be new among the client's templates (compared as nameKey does). A client has at
 * most `maxTemplatesPerClient` templates (409 `template_limit`), counted in the same commit.
 */
export async function publishTemplate(
  clientId: number,
  bundle: TemplateBundle,
  record: Resumable<PublishedTemplate> = unrecorded(),
): Promise<PublishedTemplate> {
  assertPublishable(bundle);
  const taken = await nameTaken(clientId, bundle.nome);
  if (taken) throw taken;
  const templateId = await allocateTemplateId();
  const answer = published(newTemplateRecord(clientId, templateId, bundle));
  const outcome = await insertTemplate(clientId, templateId, bundle, record.finish(answer), maxTemplatesPerClient);
  if (outcome === 'limit') throw templateLimit();
  if (outcome === 'name_taken') {
    throw (
      (await nameTaken(clientId, bundle.nome)) ??
      conflict('The template name was taken at the same time; retry', 'concurrent_change')
    );
  }
  return answer;
}

const templateLimit = () =>
  conflict(
    `A client has at most ${maxTemplatesPerClient.toLocaleString('en')} templates: delete one (DELETE /tenants/templates/{id}) to make room`,
    'template_limit',
  );

const versionLimit = (templateId: number) =>
  conflict(
    `A template has at most ${maxVersionsPerTemplate.toLocaleString('en')} versions, and template ${templateId} has them all: publish the bundle as a new template (POST /tenants/templates)`,
    'template_version_limit',
  );

/**
 * PUT /tenants/templates/{id}: the template's next version. The latest version's bundle sent again
 * (a retry whose answer was lost, say) is no new version: the answer names the latest one. A
 * template has at most `maxVersionsPerTemplate` versions (409 `template_version_limit`), refused by
 * the condition of the write that would add one more.
 */
export async function publishNextVersion(clientId: number, templateId: number, bundle: TemplateBundle) {
  assertPublishable(bundle);
  for (let attempt = 0; attempt < 3; attempt++) {
    const template = await findTemplate(clientId, templateId);
    if (!template) throw templateNotFound();
    if (template.bundleHash === bundleHashOf(bundle)) return published(template);
    const renamedOnto = await nameTaken(clientId, bundle.nome, templateId);
    if (renamedOnto) throw renamedOnto;
    const next = await insertNextVersion(template, bundle, maxVersionsPerTemplate);
    if (next === 'limit') throw versionLimit(templateId);
    if (next === 'name_taken')
      throw (
        (await nameTaken(clientId, bundle.nome, templateId)) ??
        conflict('The template name was taken at the same time; retry', 'concurrent_change')
      );
    if (next !== 'version_taken') return published(next);
  }
  throw conflict('Another version of this template was published at the same time; retry', 'concurrent_change');
}

/**
 * DELETE /tenants/templates/{id}: the template and its versions go (tenants keep what it applied;
 * one still waiting for it as its pending template drops it). Refused (409) while it is the client's
 * default; If-Match (its ETag, the latest version) guards against deleting a version not seen.
 */
export async function deleteTemplate(clientId: number, templateId: number, ifMatch: string | undefined): Promise<void> {
  const [template, client] = await Promise.all([findTemplate(clientId, templateId), findClient(clientId)]);
  if (!template) throw templateNotFound();
  checkIfMatch(ifMatch, templateEtag(template), 'template');
  if (client?.defaultTemplateId === templateId) throw isDefault(templateId);
  await refuseWhileRolledOut(template);
  if (!(await deleteTemplateRecord(template, [recordFollowUp(sweeping(clientId, templateId))]))) {
    if ((await findClient(clientId))?.defaultTemplateId === templateId) throw isDefault(templateId);
    throw conflict('The template changed while this request ran; read it again and retry', 'concurrent_change');
  }
  await sweepTemplate(clientId, templateId);
}

/**
 * A template whose rollout runs (or is paused) is not deleted: the rollout would apply a version
 * that is gone. The deletion's transaction holds to the mark read (template-repository.ts).
 */
async function refuseWhileRolledOut(template: TemplateRecord): Promise<void> {
  if (template.activeRolloutId === undefined) return;
  const rollout = await findRollout(template.activeRolloutId);
  if (rollout?.state === 'running' || rollout?.state === 'paused') {
    throw conflict(
      `Rollout ${template.activeRolloutId} of this template is ${rollout.state}: cancel it (or let it finish) before deleting the template`,
      'rollout_in_progress',
    );
  }
}

const isDefault = (templateId: number) =>
  conflict(`Template ${templateId} is the client's default template: set another default (or none) first`, 'template_is_default');

/** The follow-up that deletes a deleted template's versions. */
const sweeping = (clientId: number, templateId: number) => ({
  kind: 'sweep-template' as const,
  ownerId: clientId,
  subjectId: templateId,
});

/** Deletes a deleted template's versions, then the follow-up that asked for it. */
export async function sweepTemplate(clientId: number, templateId: number): Promise<void> {
  await deleteTemplateVersions(clientId, templateId);
  await deleteFollowUp(sweeping(clientId, templateId));
}

/** The ETag of a template: its latest version. */
export const templateEtag = (template: Pick<TemplateRecord, 'latestVersion'>) => etagOf(template.latestVersion);

/**
 * GET /tenants/templates/{id}: the latest version's bundle and the version history, with its ETag.
 * One level: the record, its newest version item and its versions, read together (all in the client's
 * partition), the record deciding. It is the authority on which version is the latest: what was read
 * beside it from before it (a publish between the reads, or the newest item's eventually consistent
 * read missing the version just published) is read again after it, as before, in that case alone.
 */
export async function describeTemplate(clientId: number, templateId: number) {
  const [template, newest, versions] = await Promise.all([
    findTemplate(clientId, templateId),
    findLatestVersion(clientId, templateId),
    listVersions(clientId, templateId),
  ]);
  if (!template) throw templateNotFound();
  const latest = template.latestVersion;
  const [bundle, history] = await Promise.all([
    newest?.version === latest ? newest.bundle : loadVersionBundle(clientId, templateId, latest),
    (versions.at(-1)?.version ?? 0) >= latest ? versions : listVersions(clientId, templateId),
  ]);
  return { view: { ...published(template), bundle, versions: history }, etag: templateEtag(template) };
}

/** GET /tenants/templates (spec 4.2): exactly `{id, nome}` per template of the client, all of them or a page of `limit`. */
export async function listTemplates(clientId: number, limit: number | undefined, cursor: string | undefined) {
  const page = await listClientTemplates(clientId, limit, cursor);
  return mapPage(page, (template) => ({ id: template.templateId, nome: template.nome }));
}

/** PUT /tenants/templates/default: a template of the client (it must exist as it is set), or null for none. */
export async function setDefaultTemplate(clientId: number, templateId: number | null) {
  if (!(await storeDefaultTemplate(clientId, templateId))) throw templateNotFound();
  return { templateId };
}
