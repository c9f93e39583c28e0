import { newToken } from '#functions/core/auth/tokens.ts';

/**
 * A client id no client has (ids are counted from 1 and this is the largest a token may carry): the
 * probe's token is well signed, so the edge lets it through, and unknown, so the service refuses it.
 */
export const PROBE_CLIENT_ID = 999_999_999_999_999;
/** Each request of the probe waits this long at most. */
const probeTimeoutMs = 10_000;

export interface ProbeCheck {
  name: 'health' | 'token';
  ok: boolean;
  /** What was expected and what came, when not ok. */
  problem?: string;
}

/**
 * Calls the API through the edge, as a caller would, and says what failed:
 *
 * - `health`: `GET /health` answers 200 (DNS, the certificate, CloudFront, the WAF, the origin secret,
 *   API Gateway and a function all worked);
 * - `token`: `GET /tenants` with a well-signed token of a client that does not exist answers the
 *   service's own 401 (API Gateway's `apigw-requestid` set: the origin answered, not the edge). So the edge function
 *   verified the signature with the key in its KeyValueStore, and the service read the token table:
 *   the whole path of an authenticated request, without a credential to keep.
 */
export async function probeEdge(apiUrl: string, fetchImpl: typeof fetch = fetch): Promise<ProbeCheck[]> {
  const call = async (path: string, headers: Record<string, string> = {}) => {
    const answer = await fetchImpl(new URL(path, apiUrl), { headers, signal: AbortSignal.timeout(probeTimeoutMs) });
    const text = await answer.text();
    // API Gateway names each request it answers in apigw-requestid; the edge's own answers have none.
    return { status: answer.status, fromOrigin: answer.headers.has('apigw-requestid'), text };
  };
  const check = async (name: ProbeCheck['name'], run: () => Promise<string | undefined>): Promise<ProbeCheck> => {
    try {
      const problem = await run();
      return problem === undefined ? { name, ok: true } : { name, ok: false, problem };
    } catch (error) {
      return { name, ok: false, problem: `no answer: ${(error as Error).message}` };
    }
  };
  return Promise.all([
    check('health', async () => {
      const { status, text } = await call('/health');
      return status === 200 ? undefined : `GET /health answered ${status}: ${text.slice(0, 200)}`;
    }),
    check('token', async () => {
      const token = await newToken('client', { clientId: PROBE_CLIENT_ID });
      const { status, fromOrigin, text } = await call('/tenants?limit=1', { authorization: `Bearer ${token}` });
      if (status === 401 && !fromOrigin)
        return 'the edge refused a well-signed token (no apigw-requestid): does its KeyValueStore have the current token key?';
      if (status === 401 && text.includes('"code":"unauthorized"')) return undefined;
      return `GET /tenants with an unknown token answered ${status}, not the service's 401: ${text.slice(0, 200)}`;
    }),
  ]);
}
