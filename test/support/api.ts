import { randomUUID } from 'node:crypto';
import { expect, inject } from 'vitest';
import { createClient } from '#functions/core/clients/clients.ts';
import { expectDocumented } from './documented.ts';

export interface ApiAnswer {
  status: number;
  headers: Headers;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary JSON answers
  body: any;
}

/** One real HTTP request to the local twin. `body` is sent as JSON unless `rawBody` is given. */
export async function api(
  method: string,
  path: string,
  options: { token?: string; body?: unknown; rawBody?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<ApiAnswer> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(`${inject('twinUrl')}${path}`, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  // JSON answers are parsed; text (HTML, YAML, NDJSON, whose one line alone would parse) is kept as sent.
  if (!/^application\/x-ndjson/.test(response.headers.get('content-type') ?? '')) {
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
  }
  expectDocumented(method, path, { status: response.status, contentType: response.headers.get('content-type'), body: parsed });
  return { status: response.status, headers: response.headers, body: parsed };
}

/** A fresh client (integrator) of its own, so tests never see each other's tenants. */
export async function newClient(): Promise<{ clientId: number; token: string }> {
  const { client, token } = await createClient(`test-client-${randomUUID()}`);
  return { clientId: client.clientId, token };
}

export async function newTenant(
  clientToken: string,
  body: Record<string, unknown> = {},
): Promise<{ id: number; nome: string; token: string; dominio: string; ativo: boolean }> {
  const answer = await api('POST', '/tenants', { token: clientToken, body: { nome: 'Acme', ativo: true, ...body } });
  if (answer.status !== 201) throw new Error(`Tenant creation failed: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.data;
}

/** A GET that must answer 200 (a failure names the path), and its answer. */
export async function getOk(path: string, token: string): Promise<ApiAnswer> {
  const answer = await api('GET', path, { token });
  expect(answer.status, path).toBe(200);
  return answer;
}

/** Asserts the error envelope of DESIGN.md section 6 and returns it. */
export function expectErrorEnvelope(answer: ApiAnswer, status: number): ApiAnswer['body'] {
  if (answer.status !== status) {
    throw new Error(`Expected ${status}, got ${answer.status}: ${JSON.stringify(answer.body)}`);
  }
  const body = answer.body;
  const ok =
    body?.status === 'error' &&
    body.success === false &&
    typeof body.message === 'string' &&
    typeof body.code === 'string' &&
    Array.isArray(body.errors);
  if (!ok) throw new Error(`Not the error envelope: ${JSON.stringify(body)}`);
  return body;
}
