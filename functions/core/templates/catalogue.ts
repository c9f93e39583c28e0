import { badRequest, conflict, notFound } from '#functions/core/errors.ts';
import { checkBundle, type TemplateBundle } from './bundle.ts';
import {
  allocateTemplateId,
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

/** POST /tenants/templates: a new template, version 1. */
export async function publishTemplate(clientId: number, bundle: TemplateBundle) {
  assertPublishable(bundle);
  return published(await insertTemplate(clientId, await allocateTemplateId(), bundle));
}

/** PUT /tenants/templates/{id}: the template's next version. */
export async function publishNextVersion(clientId: number, templateId: number, bundle: TemplateBundle) {
  assertPublishable(bundle);
  for (let attempt = 0; attempt < 3; attempt++) {
    const template = await findTemplate(clientId, templateId);
    if (!template) throw templateNotFound();
    const next = await insertNextVersion(template, bundle);
    if (next) return published(next);
  }
  throw conflict('Another version of this template was published at the same time; retry');
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
