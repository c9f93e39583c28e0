import type { ApiRequest } from './http-handler.ts';

/**
 * Whether the request's Accept header weighs a media type `isWanted` takes above JSON (JSON when it
 * says nothing, or when both weigh the same): YAML for a schedule file, NDJSON for the audit trail.
 */
export function prefersOverJson(request: Pick<ApiRequest, 'headers'>, isWanted: (type: string) => boolean): boolean {
  const weights = (request.headers.accept ?? '').split(',').map((part) => {
    const [type = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const q = parameters.find((parameter) => parameter.startsWith('q='));
    return { type, weight: q ? Number(q.slice(2)) || 0 : 1 };
  });
  const weightOf = (test: (type: string) => boolean) =>
    Math.max(0, ...weights.filter(({ type }) => test(type)).map(({ weight }) => weight));
  const json = weightOf((type) => type === 'application/json' || type === 'application/*' || type === '*/*');
  return weightOf(isWanted) > json;
}
