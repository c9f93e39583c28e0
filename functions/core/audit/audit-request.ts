import type { AuditResource } from '#functions/routes.ts';
import { prefersOverJson } from '#functions/core/api/accept.ts';
import {
  type ApiRequest,
  type ApiResponse,
  enumQueryParameter,
  invalidQueryParameter,
  optionalIntegerQueryParameter,
  pageResponse,
  textQueryParameter,
} from '#functions/core/api/http-handler.ts';
import type { Page } from '#functions/core/store/dynamo.ts';
import type { AuditActor, AuditRecord } from './audit-record.ts';
import { type AuditFilter, ndjsonOf } from './audit-trail.ts';

/** The media type of the audit trail's export: one record per line. */
export const ndjsonMediaType = 'application/x-ndjson';

/** `from` or `to`: an ISO 8601 instant, as the records' `at` (UTC, milliseconds), else a 400. */
function instantParameter(request: ApiRequest<unknown>, name: 'from' | 'to'): string | undefined {
  const raw = textQueryParameter(request, name);
  if (raw === undefined) return undefined;
  const time = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(time)) {
    const rule = 'must be an ISO 8601 date or instant (2026-11-26, 2026-11-26T10:00:00Z)';
    throw invalidQueryParameter(name, rule);
  }
  // A date alone is the whole day: `to=2026-11-26` takes the records of that day too.
  const dayEnd = name === 'to' && raw.length === 10 ? 86_400_000 - 1 : 0;
  return new Date(time + dayEnd).toISOString();
}

/** The filters both audit routes take (`GET /tenants/audit` adds `tenantId`). */
export function auditFilterOf(request: ApiRequest<unknown>): AuditFilter {
  return {
    resource: enumQueryParameter<AuditResource>(request, 'resource'),
    resourceId: textQueryParameter(request, 'resourceId'),
    actor: enumQueryParameter<AuditActor['kind']>(request, 'actor'),
    from: instantParameter(request, 'from'),
    to: instantParameter(request, 'to'),
  };
}

/**
 * The chain `GET /tenants/audit` reads: one agent's when `agent` is sent (with its tenant's
 * `tenantId`, else a 400), else the client's and its tenants' by time, `tenantId` narrowing it.
 */
export function clientAuditChainOf(
  request: ApiRequest<unknown>,
): { agentId: undefined; tenantId: number | undefined } | { agentId: number; tenantId: number } {
  const tenantId = optionalIntegerQueryParameter(request, 'tenantId');
  const agentId = optionalIntegerQueryParameter(request, 'agent');
  if (agentId === undefined) return { agentId, tenantId };
  if (tenantId === undefined) throw invalidQueryParameter('agent', 'needs tenantId: an agent is one of a tenant');
  return { agentId, tenantId };
}

/** A page of records, in the envelope or, when Accept prefers it, as NDJSON with the next page's cursor in `X-Next-Cursor`. */
export function auditPageResponse(request: ApiRequest<unknown>, page: Page<AuditRecord>): ApiResponse {
  if (!prefersOverJson(request, (type) => type === ndjsonMediaType)) return pageResponse(page);
  return {
    status: 200,
    body: ndjsonOf(page.items),
    headers: {
      'content-type': `${ndjsonMediaType}; charset=utf-8`,
      ...(page.nextCursor === null ? {} : { 'x-next-cursor': page.nextCursor }),
    },
  };
}
