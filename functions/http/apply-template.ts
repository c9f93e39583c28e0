import { httpHandler } from '#functions/core/api/http-handler.ts';
import applyTemplateSchema from '#functions/core/api/validators/apply-template.cjs';
import { tenantIdOf } from '#functions/core/auth/principals.ts';
import { applyTemplate } from '#functions/core/templates/apply.ts';

/** Spec 4.4: `{success: true, reloadPlan: [{flowId, tokenId, context}]}`. */
export const handler = httpHandler(
  async ({ principal, body, deadline }) => ({
    status: 200,
    body: { success: true, reloadPlan: await applyTemplate(tenantIdOf(principal), body.templateId, { deadline }) },
  }),
  { body: applyTemplateSchema },
);
