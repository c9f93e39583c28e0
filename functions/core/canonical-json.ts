/**
 * `value` as JSON with every object's keys in code-point order, so that two values meaning the same
 * thing read the same (an idempotent request's fingerprint, an audit record's hash). Recursion is
 * safe: what it is given nests at most `maxBodyDepth` levels.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, child]) => `${JSON.stringify(key)}:${canonicalJson(child)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? '';
}
