import { preconditionFailed } from '#functions/core/errors.ts';

/** The ETag of a version of a record (a schedule's version number, a tenant's last change, a template's latest version). */
export const etagOf = (version: number | string) => `"${version}"`;

/**
 * 412 `version_mismatch` (RFC 9110, 13.1.1) unless If-Match (when sent) names the record's current ETag, or is `*` and
 * the record exists. `what` names the record in the message. The comparison is the strong one RFC
 * 9110 (13.1.1) prescribes: a weak tag (`W/"3"`) says "about this version", never "exactly", so it
 * matches nothing.
 */
export function checkIfMatch(ifMatch: string | undefined, current: string | undefined, what: string): void {
  if (ifMatch === undefined) return;
  const tags = ifMatch.split(',').map((tag) => tag.trim());
  if (current !== undefined && (tags.includes('*') || tags.includes(current))) return;
  const now = current ? `its ETag is now ${current}` : 'it does not exist';
  throw preconditionFailed(`If-Match does not match the ${what}: ${now}`, 'version_mismatch', [
    { location: 'header', pointer: '/if-match', message: 'does not match the current version' },
  ]);
}
