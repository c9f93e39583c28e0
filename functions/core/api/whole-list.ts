import { lambdaSyncPayloadBytes } from '#functions/core/aws-limits.ts';
import { badRequest, counted } from '#functions/core/errors.ts';
import { megabytes } from './answer-fit.ts';

/** What Lambda returns at most from a synchronous invocation: the result object (status, headers, body), as JSON. */
export const maxResultBytes = lambdaSyncPayloadBytes;
/** What the result object adds around the body (its status and headers), generously. */
const resultOverheadBytes = 16 * 1024;
/** The most an answer's body may take as it travels (answerBytes): what one Lambda result carries. */
export const maxAnswerBytes = maxResultBytes - resultOverheadBytes;

const quote = 34;
const backslash = 92;

/**
 * The bytes `value` takes in an answer as it travels: its JSON (UTF-8), which the result escapes
 * once more (each `"` and `\` of the body's JSON doubles; JSON.stringify leaves no other character
 * that JSON escapes). Sizes add up: an array's is its items' plus brackets and commas.
 */
export function answerBytes(value: unknown): number {
  const json = JSON.stringify(value) ?? 'null';
  let escaped = 0;
  for (let index = 0; index < json.length; index++) {
    const code = json.charCodeAt(index);
    if (code === quote || code === backslash) escaped++;
  }
  return Buffer.byteLength(json) + escaped;
}

/** A list to answer: its items (built one at a time when it is an iterator), how many there are, and the next page's cursor. */
export interface ListSource<T> {
  items: Iterable<T>;
  /** How many items there are; taken from `items` when it is an array. */
  count?: number;
  nextCursor: string | null;
}

const tooLarge = (message: string, query = true) =>
  badRequest(message, query ? [{ location: 'query', pointer: '/limit', message }] : [], 'answer_too_large');

/** The items that fit in one answer with `envelope`, measured one by one; at the first that does not, what was measured. */
function fitting<T>(items: Iterable<T>, envelope: unknown): { data: T[]; over?: { item: T; bytes: number } } {
  const data: T[] = [];
  let bytes = answerBytes(envelope);
  for (const item of items) {
    bytes += answerBytes(item) + (data.length > 0 ? 1 : 0);
    if (bytes > maxAnswerBytes) return { data, over: { item, bytes } };
    data.push(item);
  }
  return { data };
}

const beyondQuotas =
  'it holds more than the quotas allow (data written before them): make it smaller (fewer groups, members or permission records)';

/**
 * The answer of a list the spec shows without paging (GET /tenant/datamart, /tenant/users, a
 * datamart's permission records): without `limit`, `{status, data}` with every item, exactly as
 * the spec shows it; with `limit`, one page and `nextCursor` beside `data`. An answer too large
 * for one Lambda result is a 400 that says so and names the `limit` that fits: never a shorter list,
 * and never the gateway's bare 502. Items are measured one by one as they are built (an iterator's
 * items are built only then), and the answer stops at the first that does not fit: nothing larger
 * than one answer is ever built or serialised. `name` names an item in the message when even the
 * first does not fit (the tenant's quotas keep that from happening to data written under them).
 */
export function listAnswer<T>(page: ListSource<T>, limit: number | undefined, name?: (item: T) => string) {
  const paged = limit !== undefined;
  const answer = (data: T[]) => (paged ? { status: 'success', data, nextCursor: page.nextCursor } : { status: 'success', data });
  const { data, over } = fitting(page.items, answer([]));
  if (!over) return answer(data);
  const fit = data.length;
  const count = Array.isArray(page.items) ? page.items.length : page.count;
  const of = `${count === undefined ? 'its items' : counted(count, 'item')}, ${count === fit + 1 ? '' : 'over '}${megabytes(over.bytes)}`;
  const list = paged ? 'This page' : 'The whole list';
  if (fit === 0) {
    const what = name ? name(over.item) : 'its first item';
    throw tooLarge(`${list} (${of}) is larger than one answer can carry (6 MB), and ${what} alone is: ${beyondQuotas}`);
  }
  const advice = `send limit=${Math.min(fit, 100)} or less`;
  throw tooLarge(
    paged
      ? `${list} (${of}) is larger than one answer can carry (6 MB): ${advice} (${fit === 1 ? 'only its first item fits' : `its first ${fit} items fit`})`
      : `${list} (${of}) is larger than one answer can carry (6 MB): ${advice}, and cursor, to read it in pages`,
  );
}
