/**
 * Text that becomes part of a URL or a file name cannot climb out of where it is put, nor look like
 * something else: every such field takes `text#/$defs/sitePath` or `text#/$defs/fileName`, which
 * refuse dot segments (also percent-encoded), separators, whitespace, control characters,
 * invisible format characters (bidi overrides, zero-width spaces) and lone surrogates.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, test } from 'vitest';
import loginSchema from '#schemas/login.schema.json' with { type: 'json' };
import scheduleSchema from '#schemas/schedule.v2.schema.json' with { type: 'json' };
import templateSchema from '#schemas/template-bundle.schema.json' with { type: 'json' };
import textSchema from '#schemas/text.schema.json' with { type: 'json' };

const ajv = new Ajv2020({ strict: false, unicodeRegExp: true });
ajv.addSchema(textSchema);
const sitePath = ajv.compile({ $ref: 'text#/$defs/sitePath' });
const fileName = ajv.compile({ $ref: 'text#/$defs/fileName' });

/** What no path or file name may hold, whatever else it holds. */
const hidden = ['\u0000', '\u0001', '\u001b', '\u007f', '\u202e', '\u2066', '\u200b', '\ufeff', '\u00ad', '\ud800'];

describe('site paths (the SSO route, a template application route)', () => {
  test('the fields that become a path on the tenant site take sitePath', () => {
    expect(loginSchema.properties.route.$ref).toBe('text#/$defs/sitePath');
    expect(templateSchema.$defs.application.properties.route.$ref).toBe('text#/$defs/sitePath');
  });

  test.each(['/', '/dashboards/sales', '/a.b/c..d/.e', '/x?y=../z', '/app#section', '/çà/日本', '/%20encoded'])(
    'takes %j',
    (path) => {
      expect(sitePath(path)).toBe(true);
    },
  );

  test.each([
    ['another host', '//evil.example'],
    ['a backslash host', '/\\evil.example'],
    ['no leading slash', 'dashboards'],
    ['a parent segment', '/a/../../admin'],
    ['a parent segment at the end', '/a/..'],
    ['a current segment', '/./a'],
    ['a percent-encoded parent', '/a/%2e%2e/b'],
    ['a mixed-case encoded parent', '/a/.%2E/b'],
    ['a parent before the query', '/a/..?x'],
    ['a space', '/a b'],
    ['a tab', '/a\tb'],
    ['a line break', '/a\nb'],
    ['a backslash', '/a\\b'],
    ['a non-breaking space', '/a\u00a0b'],
  ])('refuses %s', (_what, path) => {
    expect(sitePath(path)).toBe(false);
  });

  test.each(hidden)('refuses U+%s anywhere', (character) => {
    expect(sitePath(`/a${character}b`)).toBe(false);
  });
});

describe('file names (a schedule file name)', () => {
  test('the fields that become a file name take fileName', () => {
    expect(scheduleSchema.properties.fileName.$ref).toBe('text#/$defs/fileName');
  });

  test.each(['daily.yaml', 'Relatório de vendas.yml', '..hidden', 'a..b', '.profile'])('takes %j', (name) => {
    expect(fileName(name)).toBe(true);
  });

  test.each([
    ['a dot segment', '.'],
    ['a parent segment', '..'],
    ['a path', 'a/b'],
    ['a Windows path', 'a\\b'],
    ['a drive', 'c:x'],
    ['a wildcard', 'a*'],
    ['a quote', 'a"b'],
    ['a pipe', 'a|b'],
    ['empty', ''],
  ])('refuses %s', (_what, name) => {
    expect(fileName(name)).toBe(false);
  });

  test.each(hidden)('refuses U+%s anywhere', (character) => {
    expect(fileName(`a${character}b.yaml`)).toBe(false);
  });
});
