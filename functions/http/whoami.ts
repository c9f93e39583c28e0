import { httpHandler } from '#functions/core/api/http-handler.ts';

/** Only the token lookup: useful to check a token, and the baseline the benchmarks compare against. */
export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: {
    status: 'success',
    data: principal.kind === 'tenant' ? { kind: 'tenant', tenantId: principal.tenantId } : principal,
  },
}));
