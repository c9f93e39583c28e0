import type { Twin } from '#local/twin.ts';

/** A JSON answer of the API, read loosely: the benches only pick the fields they need. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- arbitrary JSON answers
export type Answer = Record<string, any>;

/** One request to the twin; anything but a 2xx stops the bench with the answer. */
export async function callTwin(
  twin: Pick<Twin, 'url'>,
  method: string,
  path: string,
  token: string,
  body?: unknown,
): Promise<Answer> {
  const response = await fetch(`${twin.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const parsed = (await response.json()) as Answer;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(parsed).slice(0, 300)}`);
  return parsed;
}

/** The `data` of a success answer. */
export const twinData = async (...request: Parameters<typeof callTwin>): Promise<Answer> =>
  (await callTwin(...request)).data as Answer;
