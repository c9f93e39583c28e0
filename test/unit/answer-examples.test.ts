/**
 * The examples of the document's success answers (tools/openapi/answer-examples.json, which
 * `npm run examples:record` writes from answers the tests received): every 2xx JSON answer has one,
 * each is what its schema describes, and none holds a credential other than the fixed placeholders.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect, test } from 'vitest';
import {
  answerExamplesFile,
  jsonSuccessAnswers,
  liveSecrets,
  placeholderJwtSignature,
  placeholderSigningSecret,
  placeholderTokenMac,
  placeholderTokenRandom,
} from '#bin/record-answer-examples.ts';
import { openApiFile } from '#tools/openapi/openapi-file.ts';

type Media = { schema: unknown; example?: unknown };
const document = JSON.parse(readFileSync(openApiFile, 'utf8')) as {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, Media> }> }>>;
};
const examplesText = readFileSync(answerExamplesFile, 'utf8');
const examples = JSON.parse(examplesText) as Record<string, Record<string, unknown>>;

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addSchema(document as object, 'openapi');
const pointerToken = (token: string) => token.replaceAll('~', '~0').replaceAll('/', '~1');

const answers = jsonSuccessAnswers(document).map((key) => {
  const [method = '', path = '', status = ''] = key.split(' ');
  const operation = `/paths/${pointerToken(path)}/${method.toLowerCase()}`;
  const media = document.paths[path]?.[method.toLowerCase()]?.responses[status]?.content?.['application/json'] as Media;
  return {
    key,
    route: `${method} ${path}`,
    status,
    media,
    schema: `openapi#${operation}/responses/${status}/content/application~1json/schema`,
  };
});

test('the document has the 2xx JSON answers of every area', () => {
  expect(answers.length).toBeGreaterThan(70);
  expect(answers.map(({ key }) => key)).toEqual(
    expect.arrayContaining(['GET /health 200', 'POST /tenants 201', 'PUT /tenant/schedules/{id} 201']),
  );
});

test.each(answers.map((answer) => [answer.key, answer] as const))('%s has an example its schema accepts', (_key, answer) => {
  expect(answer.media.example, 'run npm run examples:record, then npm run docs').toBeDefined();
  const validate = ajv.compile({ $ref: answer.schema });
  const problems = validate(answer.media.example)
    ? []
    : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message}`);
  expect(problems).toEqual([]);
});

test('every 2xx YAML answer (a schedule file) shows the record its JSON answer shows, and its schema accepts it', () => {
  const yamlAnswers = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).flatMap(([method, { responses }]) =>
      Object.entries(responses).flatMap(([status, answer]) => {
        const media = answer.content?.['application/yaml'];
        return status.startsWith('2') && media ? [{ key: `${method} ${path} ${status}`, method, path, status, media }] : [];
      }),
    ),
  );
  expect(yamlAnswers.length).toBeGreaterThanOrEqual(3);
  for (const { key, method, path, status, media } of yamlAnswers) {
    const json = document.paths[path]?.[method]?.responses[status]?.content?.['application/json']?.example as { data?: unknown };
    expect(media.example, key).toEqual(json?.data);
    const validate = ajv.compile({
      $ref: `openapi#/paths/${pointerToken(path)}/${method}/responses/${status}/content/application~1yaml/schema`,
    });
    expect(validate(media.example), key).toBe(true);
  }
});

test('every example in the file is of an answer the document has', () => {
  const documented = new Set(answers.map(({ route, status }) => `${route} ${status}`));
  const recorded = Object.entries(examples).flatMap(([route, byStatus]) =>
    Object.keys(byStatus).map((status) => `${route} ${status}`),
  );
  expect(recorded.filter((key) => !documented.has(key))).toEqual([]);
});

test('the examples hold the placeholder credentials, and nothing that looks like a real one', () => {
  // The tokens, login tokens and signing secrets the answers carried are there, as placeholders.
  for (const placeholder of [placeholderTokenRandom, placeholderTokenMac, placeholderJwtSignature, placeholderSigningSecret]) {
    expect(examplesText).toContain(placeholder);
  }
  expect(liveSecrets(examplesText)).toEqual([]);
});

test('a real token, login token or signing secret is told from the placeholders', () => {
  const random = () => randomBytes(32).toString('base64url');
  const token = `ten_1.4-27.${random()}.${random()}`;
  const placeholder = `agt_1.1-1-1.${placeholderTokenRandom}.${placeholderTokenMac}`;
  const unsigned = 'cli_local_demo_token_0123456789';
  const realRandom = `cli_1.1.${random()}.${placeholderTokenMac}`;
  const jwt = `eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiIxIn0.${randomBytes(64).toString('base64url')}`;
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const text = JSON.stringify({
    token,
    placeholder,
    unsigned,
    realRandom,
    url: `https://acme-1.localhost/auth/api/${jwt}?showMenu=0`,
    secret,
  });
  expect(liveSecrets(text)).toEqual([token, unsigned, realRandom, jwt, secret]);
  expect(liveSecrets(JSON.stringify({ placeholder, secret: placeholderSigningSecret }))).toEqual([]);
});
