/**
 * Migration 4: every template's name claimed. Earlier versions published templates without the
 * claim on their name (`TEMPLATENAME#<name key>`) that now keeps a name to one template of a client,
 * and a publication found those templates by listing them all. Each template gets its claim unless
 * the name is claimed: by itself (a rerun) or by another template, one an earlier version let share
 * its name (compared as names.ts `nameKey` does), which keeps it; a publication of that name is
 * refused naming the claim's holder, as the listing named one of them.
 */
import * as stored from '#functions/core/store/entity-declarations.ts';
import type { Migration } from '#functions/core/store/migrations.ts';
import { claimTemplateName, type TemplateRecord } from '#functions/core/templates/template-repository.ts';

export const templateNamesClaimed: Migration = {
  version: 4,
  name: 'template-names-claimed',
  // Every template: a claim is an item of its own, which no condition on the record can ask about, and a client
  // has at most 1,000 templates.
  selects: [{ entity: stored.template }],
  async migrate(item) {
    const { clientId, templateId, nome } = item as unknown as TemplateRecord;
    await claimTemplateName(clientId, templateId, nome);
  },
};
