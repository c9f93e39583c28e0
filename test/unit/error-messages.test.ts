/**
 * Errors a program can branch on and a person can read: one code per meaning (a 404 says what is
 * missing), messages in words (never a regular expression to decode) and in grammar (`an agent`,
 * `1 item`), checked over the whole catalog, every schema and every call that names a 404.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { describeErrors } from '#functions/core/api/validation.ts';
import { errorCodes } from '#functions/core/error-codes.ts';
import { counted, withArticle } from '#functions/core/errors.ts';

const filesUnder = (folder: string, ending: string): string[] =>
  readdirSync(folder, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith(ending))
    .map((name) => join(folder, name));

/** Grammar a message must never have: a plural after one, two spaces. */
const badGrammar = [/(?<![\d,.])\b1 (?!MB|KB)[a-z]+s\b/, / {2}/];
/** The articles of `text` that are not the one its word takes (`a agent`, `an tenant`). */
const wrongArticles = (text: string) =>
  [...text.matchAll(/\b([Aa]n?) ([A-Za-z]+)/g)]
    .map(([, article = '', word = '']) => `${article.toLowerCase()} ${word}`)
    .filter((phrase) => withArticle(phrase.split(' ')[1] ?? '') !== phrase);
/** What only a regular expression looks like. */
const regularExpression = /\(\?[:!=<]|\\[sdwSDW]|\[\^|\^\/|\$$/;

describe('the catalog', () => {
  test('every meaning reads as words, in grammar', () => {
    for (const [code, { meaning }] of Object.entries(errorCodes)) {
      for (const rule of badGrammar) expect(meaning, code).not.toMatch(rule);
      expect(wrongArticles(meaning), code).toEqual([]);
      expect(meaning, code).not.toMatch(regularExpression);
    }
  });

  test('one meaning per code: no two codes mean the same, and a 404 says what is missing', () => {
    const meanings = Object.values(errorCodes).map(({ meaning }) => meaning);
    expect(new Set(meanings).size).toBe(meanings.length);
    const notFound = Object.entries(errorCodes).filter(([, { status }]) => status === 404);
    expect(notFound.length).toBeGreaterThan(10);
    // What is missing, in a word or two (`template_version_not_found`).
    for (const [code] of notFound) expect(code).toMatch(/^[a-z]+(?:_[a-z]+)?_not_found$/);
  });

  test('each 404 message of the code is said with one code, and each code with one message', () => {
    const calls = filesUnder('functions', '.ts').flatMap((file) =>
      [...readFileSync(file, 'utf8').matchAll(/notFound\(\s*'([^']+)',\s*'([a-z_]+)'\s*\)/g)].map(
        ([, message = '', code = '']) => ({
          message,
          code,
        }),
      ),
    );
    expect(calls.length).toBeGreaterThan(10);
    const codesOf = new Map<string, Set<string>>();
    const messagesOf = new Map<string, Set<string>>();
    for (const { message, code } of calls) {
      codesOf.set(message, (codesOf.get(message) ?? new Set()).add(code));
      messagesOf.set(code, (messagesOf.get(code) ?? new Set()).add(message));
    }
    for (const [message, codes] of codesOf) expect([...codes], message).toHaveLength(1);
    for (const [code, messages] of messagesOf) expect([...messages], code).toHaveLength(1);
  });
});

describe('validation messages', () => {
  test('every pattern in every schema says in words what it takes', () => {
    const missing: string[] = [];
    const visit = (node: unknown, where: string) => {
      if (Array.isArray(node)) node.forEach((child, index) => visit(child, `${where}/${index}`));
      else if (node && typeof node === 'object') {
        const record = node as Record<string, unknown>;
        if (typeof record.pattern === 'string' && typeof record['x-pattern-message'] !== 'string') missing.push(where);
        for (const [key, child] of Object.entries(record)) visit(child, `${where}/${key}`);
      }
    };
    const schemas = filesUnder('schemas', '.json');
    expect(schemas.length).toBeGreaterThan(20);
    for (const file of schemas) visit(JSON.parse(readFileSync(file, 'utf8')), file);
    expect(missing).toEqual([]);
  });

  test('counts agree with their nouns', () => {
    const message = (keyword: string, limit: number) =>
      describeErrors([{ keyword, instancePath: '/x', schemaPath: '#', params: { limit } }])[0]?.message;
    expect(message('minItems', 1)).toBe('must have at least 1 item');
    expect(message('maxItems', 50)).toBe('must have at most 50 items');
    expect(message('maxProperties', 1)).toBe('must have at most 1 property');
    expect(message('maxLength', 1)).toBe('must be at most 1 character long');
    expect(message('maxLength', 1000)).toBe('must be at most 1,000 characters long');
    // An unknown pattern (none reaches here: npm run generate refuses one without its message) is still words.
    const pattern = describeErrors([{ keyword: 'pattern', instancePath: '/x', schemaPath: '#', params: { pattern: '^a$' } }]);
    expect(pattern[0]?.message).not.toMatch(/\^a\$/);
  });

  test('articles and plurals', () => {
    expect(['agent', 'tenant', 'integrator', 'client', 'user', 'unknown'].map(withArticle)).toEqual([
      'an agent',
      'a tenant',
      'an integrator',
      'a client',
      'a user',
      'an unknown',
    ]);
    expect([0, 1, 2, 1000].map((count) => counted(count, 'item'))).toEqual(['0 items', '1 item', '2 items', '1,000 items']);
  });
});
