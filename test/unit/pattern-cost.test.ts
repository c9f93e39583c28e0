/**
 * Every regular expression that reads a caller's text runs in linear time, whatever the text: each
 * schema's `pattern` (ajv runs them with the `u` flag) and the patterns the functions test requests
 * with. recheck decides it by analysing the expression (no timing), and names the attack string
 * when it is not.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkSync } from 'recheck';
import { expect, test } from 'vitest';
import { idempotencyKeyPattern } from '#functions/core/api/idempotency.ts';
import { yamlMediaType } from '#functions/core/api/request-body.ts';
import { tokenKeyIdPattern } from '#functions/core/auth/token-keys.ts';
import { bearerPattern } from '#functions/core/auth/tokens.ts';

/** Every `pattern` of every schema, with where it is. */
function schemaPatterns(): Array<{ where: string; source: string }> {
  const found: Array<{ where: string; source: string }> = [];
  const visit = (node: unknown, where: string) => {
    if (Array.isArray(node)) node.forEach((child, index) => visit(child, `${where}/${index}`));
    else if (node && typeof node === 'object') {
      const record = node as Record<string, unknown>;
      if (typeof record.pattern === 'string') found.push({ where, source: record.pattern });
      for (const [key, child] of Object.entries(record)) visit(child, `${where}/${key}`);
    }
  };
  for (const name of readdirSync('schemas', { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.json'))) {
    visit(JSON.parse(readFileSync(join('schemas', name), 'utf8')), name);
  }
  return found;
}

test('every pattern a request meets runs in linear time', () => {
  const patterns = [
    ...schemaPatterns().map(({ where, source }) => ({ where, source, flags: 'u' })),
    ...Object.entries({ idempotencyKeyPattern, yamlMediaType, tokenKeyIdPattern, bearerPattern }).map(([where, pattern]) => ({
      where,
      source: pattern.source,
      flags: pattern.flags,
    })),
  ];
  expect(patterns.length).toBeGreaterThan(15);
  // An expression several schemas share is analysed once.
  const verdicts = new Map<string, ReturnType<typeof checkSync>>();
  const unsafe = patterns.flatMap(({ where, source, flags }) => {
    const key = `${flags}/${source}`;
    // No time limit: under load a timed check gives up as `unknown`, and the answer must not depend on the machine.
    const diagnostics = verdicts.get(key) ?? checkSync(source, flags, { timeout: null });
    verdicts.set(key, diagnostics);
    return diagnostics.status === 'safe' ? [] : [{ where, source, diagnostics }];
  });
  expect(unsafe).toEqual([]);
}, 120_000);

test('the check finds a pattern that backtracks', () => {
  expect(checkSync('^(a+)+$', '').status).toBe('vulnerable');
  expect(checkSync('^(?:.*/)*x$', 'u').status).toBe('vulnerable');
});
