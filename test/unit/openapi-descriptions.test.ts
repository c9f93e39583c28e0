import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { openApiFile } from '#tools/openapi/openapi-file.ts';
import { routeKey, routes } from '#functions/routes.ts';

interface Operation {
  summary?: string;
  description?: string;
}

const document = JSON.parse(readFileSync(openApiFile, 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
  webhooks: Record<string, Record<string, Operation>>;
};

/** Every operation of the document, the webhooks' too, by `METHOD path`. */
const operations = [...Object.entries(document.paths), ...Object.entries(document.webhooks)].flatMap(([path, byMethod]) =>
  Object.entries(byMethod).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation] as const),
);

/** The words of a text, lower-cased: punctuation, markup and spacing say nothing of their own. */
const wordsOf = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** A description teaches when it says this many words its summary does not. */
const fewestNewWords = 8;

test("the document has operations to check: every route's, at least", () => {
  expect(operations.length).toBeGreaterThanOrEqual(routes.length);
});

test.each(operations)('%s: its description says more than its summary', (_key, { summary = '', description = '' }) => {
  // The operation's own text is the first paragraph: the notes its row's facts give (body size,
  // Idempotency-Key, paging…) follow it, and are no description of what the operation does.
  const [own = ''] = description.split('\n\n');
  const summaryWords = new Set(wordsOf(summary));
  const newWords = wordsOf(own).filter((word) => !summaryWords.has(word));
  expect(own.trim(), 'no description').not.toBe('');
  expect(new Set(newWords).size, `only repeats its summary: ${own}`).toBeGreaterThanOrEqual(fewestNewWords);
});

test.each(routes.map((route) => [routeKey(route), route] as const))(
  '%s: the document has its row’s description, and the notes beside it',
  (_key, route) => {
    const { description = '' } = document.paths[route.path]?.[route.method.toLowerCase()] ?? {};
    expect(description.startsWith(route.docs.description)).toBe(true);
    if (route.idempotent) expect(description).toContain('`Idempotency-Key`');
    if (route.paginated) expect(description).toContain('`nextCursor`');
    if (route.docs.credential) expect(description).toContain(route.docs.credential.note);
  },
);
