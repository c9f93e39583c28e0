import { parseDocument } from 'yaml';
import { badRequest } from '../errors.ts';

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
