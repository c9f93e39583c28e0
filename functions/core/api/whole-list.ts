import { badRequest } from '#functions/core/errors.ts';
import type { Page } from '#functions/core/store/dynamo.ts';

/** What Lambda returns at most from a synchronous invocation: the result object (status, headers, body), as JSON. */
export const maxResultBytes = 6 * 1024 * 1024;
/** What the result object adds around the body (its status and headers), generously. */
const resultOverheadBytes = 16 * 1024;

/**
 * The answer of a list the spec shows without paging (GET /tenant/datamart, /tenant/users, a
 * datamart's permission records): without `limit`, `{status, data}` with every item, exactly as
 * the spec shows it; with `limit`, one page and `nextCursor` beside `data`. An answer too large
 * for one Lambda result is a 400 that says so and names `limit`: never a shorter list, and never
 * the gateway's bare 502.
 */
export function listAnswer<T>(page: Page<T>, limit: number | undefined) {
  const body =
    limit === undefined
      ? { status: 'success', data: page.items }
      : { status: 'success', data: page.items, nextCursor: page.nextCursor };
  // The body travels as a JSON string inside the result, escaped once more.
  const bytes = Buffer.byteLength(JSON.stringify(JSON.stringify(body))) + resultOverheadBytes;
  if (bytes > maxResultBytes) {
    const size = `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
    const message =
      limit === undefined
        ? `The whole list (${page.items.length} items, ${size}) is larger than one answer can carry (6 MB): send limit (1 to 100) to read it in pages`
        : `This page (${page.items.length} items, ${size}) is larger than one answer can carry (6 MB): send a smaller limit`;
    throw badRequest(message, [{ location: 'query', pointer: '/limit', message }], 'answer_too_large');
  }
  return body;
}
