import { Composer, isMap, isNode, isScalar, isSeq, Lexer, Parser, stringify } from 'yaml';
import { prefersOverJson } from './accept.ts';
import type { ApiRequest } from './http-handler.ts';
import { maxBodyDepth, yamlMediaType } from './request-body.ts';
import { badRequest, payloadTooLarge } from '#functions/core/errors.ts';

/** Bounds YAML alias expansion ("billion laughs"). */
const maxYamlAliases = 100;

/**
 * Bounds the YAML library's work. Its cost is linear, but about 1.5 µs per lexical token (a key, a
 * value, an indicator, a space, a line break, a comment: `key: 1` and its line break are seven),
 * some 50 times JSON's: a 1 MiB body of short keys is 800,000 tokens and 1.3 s of parsing.
 * 200,000 tokens (28,000 such keys, half a megabyte of YAML as people write it) parse in about
 * 0.3 s; a larger document can be sent as JSON.
 */
export const maxYamlTokens = 200_000;

/**
 * Request bodies in YAML, for the routes that take them (they pass this to httpHandler, so only
 * their bundles carry the YAML library). YAML 1.2 core schema only, so that a body means the same
 * as its JSON: no custom, language or YAML 1.1 tags (`!!js/function`, and `!!set`, `!!omap`,
 * `!!timestamp`, `!!binary`, which the library would turn into a Set, a Map, a Date or bytes, are
 * errors, not values: `resolveKnownTags` is off), one document, plain unique keys, aliases, size
 * and nesting bounded. The library's own unique-key check (`uniqueKeys`) compares each key with
 * every earlier key of its mapping, quadratic in the mapping's size (116k keys in a 1 MB body took
 * minutes), so it is off and `checkKeys` does the same in linear time.
 */
export function parseYamlBody(text: string): unknown {
  const parser = new Parser();
  const composer = new Composer({
    schema: 'core',
    customTags: [],
    resolveKnownTags: false,
    uniqueKeys: false,
    merge: false,
  });
  const [document, another] = composer.compose(boundedTokens(text, parser), true, text.length);
  if (!document) throw malformed('no document');
  if (another) throw malformed('several documents; send one');
  const problem = document.errors[0] ?? document.warnings[0];
  if (problem) throw malformed(problem.message);
  checkKeys(document.contents, text);
  try {
    return document.toJS({ maxAliasCount: maxYamlAliases });
  } catch (error) {
    throw malformed((error as Error).message);
  }
}

/**
 * How many collections the parser may have open at once: the body's depth bound, plus the document
 * and the token in progress, with room to spare (the depth itself is checked exactly on the value).
 * The composer builds nested collections by recursion, so without this bound a few kilobytes of
 * `- - - - …` would exhaust the stack.
 */
const maxOpenCollections = maxBodyDepth + 8;

/**
 * The parser's output, stopping as soon as the text has more lexical tokens than the bound (413)
 * or nests deeper than the body may (400). The parser keeps its open collections on a stack of its
 * own, not the call stack, so it sees the depth before anything recurses.
 */
function* boundedTokens(text: string, parser: Parser) {
  let count = 0;
  for (const lexeme of new Lexer().lex(text)) {
    if (++count > maxYamlTokens) {
      throw payloadTooLarge(`Request body has more than ${maxYamlTokens} YAML tokens; send it as JSON`);
    }
    yield* parser.next(lexeme);
    if (parser.stack.length > maxOpenCollections) {
      throw badRequest(`Request body nests deeper than ${maxBodyDepth} levels`, [], 'malformed_body');
    }
  }
  yield* parser.end();
}

const malformed = (reason: string) =>
  badRequest(`Request body is not valid YAML: ${reason.split('\n')[0]}`, [], 'malformed_yaml');

/**
 * Every mapping key is a plain value (a list, mapping or alias as a key has no JSON property name)
 * and appears once per mapping, compared as the property name it becomes (`1` and `"1"` are the
 * same key in the parsed body, so the later would silently win). One Set per mapping keeps this
 * linear; a loop, not recursion, so nesting cannot exhaust the stack. Aliases are not followed:
 * the node they name is checked where it is written.
 */
function checkKeys(root: unknown, text: string): void {
  const pending: unknown[] = [root];
  while (pending.length > 0) {
    const node = pending.pop();
    if (isSeq(node)) {
      for (const item of node.items) pending.push(item);
    } else if (isMap(node)) {
      const seen = new Set<string>();
      for (const { key, value } of node.items) {
        if (key !== null && !isScalar(key)) throw malformed(`a mapping key must be a plain value${lineOf(key, text)}`);
        const name = key === null || key.value === null ? '' : String(key.value);
        if (seen.has(name)) throw malformed(`the key ${quoted(name)} appears twice in one mapping${lineOf(key, text)}`);
        seen.add(name);
        pending.push(value);
      }
    }
  }
}

const quoted = (name: string) => JSON.stringify(name.length > 60 ? `${name.slice(0, 57)}...` : name);

/** Where a key is, for the message: counted only when there is a message to write. */
const lineOf = (node: unknown, text: string) => {
  const offset = isNode(node) ? node.range?.[0] : undefined;
  return offset === undefined ? '' : ` (line ${text.slice(0, offset).split('\n').length})`;
};

/** Whether the request's Accept header prefers YAML to JSON (JSON when it says nothing, or when both weigh the same). */
export const prefersYaml = (request: Pick<ApiRequest, 'headers'>): boolean =>
  prefersOverJson(request, (type) => yamlMediaType.test(type));

/**
 * A value as YAML text. Strings that a YAML 1.1 reader would take for something else (`7:05` is
 * a number there, `no` a boolean) come out quoted, so every reader gets back what was sent.
 */
export const toYaml = (value: unknown) => stringify(value, { version: '1.1', lineWidth: 0 });
