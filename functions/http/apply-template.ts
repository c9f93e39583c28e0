import { httpHandler } from '../core/api/http-handler.ts';
import applyTemplateSchema from '../core/api/validators/apply-template.cjs';
import { tenantIdOf } from '../core/auth/principals.ts';
import { applyTemplate } from '../core/templates/apply.ts';

/** Spec 4.4: `{success: true, reloadPlan: [{flowId, tokenId, context}]}`. */
export const handler = httpHandler(
  async ({ principal, body }) => ({
    status: 200,
    body: { success: true, reloadPlan: await applyTemplate(tenantIdOf(principal), body.templateId) },
  }),
  { body: applyTemplateSchema },
);
