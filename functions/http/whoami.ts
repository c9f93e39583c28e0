import { httpHandler } from '#functions/core/api/http-handler.ts';

/**
 * Only the token lookup: useful to check a token (and to find the changes made with it in the audit
 * trail, by its `tokenId`), and the baseline the benchmarks compare against.
 */
export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: {
    status: 'success',
    data: principal.kind === 'tenant' ? { kind: 'tenant', tenantId: principal.tenantId, tokenId: principal.tokenId } : principal,
  },
}));
