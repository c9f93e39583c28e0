/**
 * Contract checking of real answers against docs/openapi.json (the idea behind Schemathesis and
 * Dredd): every answer the tests receive from the twin must have a status the document declares for
 * its route, a content type it declares for that status, and a body its schema accepts. The test
 * helpers that send real HTTP call it on every answer, so the document cannot drift from what the
 * routes really answer.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { yamlMediaType } from '#functions/core/api/request-body.ts';
import { matchRoute } from '#functions/core/api/route-matching.ts';
import { routes } from '#functions/routes.ts';
import { openApiFile } from '#tools/openapi/openapi-file.ts';

interface MediaType {
  schema?: unknown;
}
interface ResponseObject {
  $ref?: string;
  content?: Record<string, MediaType>;
}
interface Document {
  paths: Record<string, Record<string, { responses: Record<string, ResponseObject> }>>;
  components: { responses: Record<string, ResponseObject> };
}

const document = JSON.parse(readFileSync(openApiFile, 'utf8')) as Document;
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addSchema(document as object, 'openapi');

const pointerToken = (token: string) => token.replaceAll('~', '~0').replaceAll('/', '~1');
const validators = new Map<string, ValidateFunction>();

/** The validator of the schema at a JSON pointer of the document, compiled once. */
function validatorAt(pointer: string): ValidateFunction {
  let validate = validators.get(pointer);
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi#${pointer}` });
    validators.set(pointer, validate);
  }
  return validate;
}

export interface ReceivedAnswer {
  status: number;
  /** The Content-Type header, if any. */
  contentType: string | null | undefined;
  /** The body as parsed (JSON) or as text. */
  body: unknown;
}

/**
 * Throws when an answer breaks the document: a status it does not declare for the route, a content
 * type it does not declare for that status, or a body its schema refuses. A path no route has is the
 * router's own answer (404, 405), described by the document's introduction, and is not checked here.
 */
export function expectDocumented(method: string, url: string, answer: ReceivedAnswer): void {
  const route = matchRoute(method, new URL(url, 'http://twin').pathname, routes)?.route;
  if (!route) return;
  const where = `${method} ${route.path}`;
  // Which routes the tests reach, for the list of routes no test calls (CONTRACT_CALLS_FILE=path npm test).
  if (process.env.CONTRACT_CALLS_FILE) appendFileSync(process.env.CONTRACT_CALLS_FILE, `${where} ${answer.status}\n`);
  let response = document.paths[route.path]?.[method.toLowerCase()]?.responses[String(answer.status)];
  let pointer = `/paths/${pointerToken(route.path)}/${method.toLowerCase()}/responses/${answer.status}`;
  if (!response) throw new Error(`${where} answered ${answer.status}, which docs/openapi.json does not document for it`);
  if (response.$ref) {
    pointer = response.$ref.slice(1);
    response = document.components.responses[response.$ref.split('/').at(-1) ?? ''] ?? {};
  }
  const content = response.content ?? {};
  const mediaType = (answer.contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (Object.keys(content).length === 0) {
    if (mediaType && answer.body !== '')
      throw new Error(`${where} ${answer.status} has a ${mediaType} body, which is documented as none`);
    return;
  }
  const media = content[mediaType];
  if (!media) {
    throw new Error(
      `${where} ${answer.status} answered ${mediaType || 'no content type'}; documented: ${Object.keys(content).join(', ')}`,
    );
  }
  if (!media.schema) return;
  const validate = validatorAt(`${pointer}/content/${pointerToken(mediaType)}/schema`);
  // A YAML answer (a schedule file) is checked as the value it spells.
  const value = yamlMediaType.test(mediaType) && typeof answer.body === 'string' ? parse(answer.body) : answer.body;
  if (!validate(value)) {
    const problems = (validate.errors ?? []).slice(0, 5).map((error) => `${error.instancePath || '/'} ${error.message}`);
    throw new Error(
      `${where} ${answer.status} does not match docs/openapi.json: ${problems.join('; ')}\n${JSON.stringify(answer.body).slice(0, 500)}`,
    );
  }
  // Real answers, for the document's success examples (bin/record-answer-examples.ts sets it).
  if (process.env.ANSWER_EXAMPLES_FILE && answer.status >= 200 && answer.status < 300 && mediaType === 'application/json') {
    const line = { method: route.method, path: route.path, status: answer.status, body: answer.body };
    appendFileSync(process.env.ANSWER_EXAMPLES_FILE, `${JSON.stringify(line)}\n`);
  }
}
