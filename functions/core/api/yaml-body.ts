import { parseDocument, stringify } from 'yaml';
import type { ApiRequest } from './http-handler.ts';
import { yamlMediaType } from './request-body.ts';
import { badRequest } from '#functions/core/errors.ts';

/** Bounds YAML alias expansion ("billion laughs"). */
const maxYamlAliases = 100;

/**
 * Request bodies in YAML, for the routes that take them (they pass this to httpHandler, so only
 * their bundles carry the YAML library). YAML 1.2 core schema only: no custom or language tags
 * (`!!js/function` and the like are errors, not strings), one document, unique keys, aliases bounded.
 */
export function parseYamlBody(text: string): unknown {
  const document = parseDocument(text, { schema: 'core', customTags: [], uniqueKeys: true, merge: false, prettyErrors: false });
  const problem = document.errors[0] ?? document.warnings[0];
  if (problem) throw malformed(problem.message);
  try {
    return document.toJS({ maxAliasCount: maxYamlAliases });
  } catch (error) {
    throw malformed((error as Error).message);
  }
}

const malformed = (reason: string) =>
  badRequest(`Request body is not valid YAML: ${reason.split('\n')[0]}`, [], 'malformed_yaml');

/**
 * Whether the request's Accept header prefers YAML to JSON (JSON when it says nothing, or when
 * both weigh the same).
 */
export function prefersYaml(request: Pick<ApiRequest, 'headers'>): boolean {
  const weights = (request.headers.accept ?? '').split(',').map((part) => {
    const [type = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    return { type, weight: q ? Number(q.slice(2)) || 0 : 1 };
  });
  const weightOf = (test: (type: string) => boolean) =>
    Math.max(0, ...weights.filter(({ type }) => test(type)).map(({ weight }) => weight));
  const yaml = weightOf((type) => yamlMediaType.test(type));
  const json = weightOf((type) => type === 'application/json' || type === 'application/*' || type === '*/*');
  return yaml > json;
}

/**
 * A value as YAML text. Strings that a YAML 1.1 reader would take for something else (`7:05` is
 * a number there, `no` a boolean) come out quoted, so every reader gets back what was sent.
 */
export const toYaml = (value: unknown) => stringify(value, { version: '1.1', lineWidth: 0 });
