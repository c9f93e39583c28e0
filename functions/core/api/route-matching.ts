/** API Gateway's key of the route that takes what no other route matches. */
export const unmatchedRouteKey = '$default';

/** A route as far as matching goes: its method and its path template (`{name}` is one segment). */
interface Routable {
  method: string;
  path: string;
}

export interface RouteMatch<R extends Routable> {
  route: R;
  pathParameters: Record<string, string>;
}

/**
 * Picks the route API Gateway would: same method, every segment matching, literal segments
 * preferred over `{parameters}` (so `/tenants/delete` beats `/tenants/{id}`).
 */
export function matchRoute<R extends Routable>(method: string, path: string, table: readonly R[]): RouteMatch<R> | undefined {
  const segments = path.split('/').slice(1);
  let best: (RouteMatch<R> & { literals: number }) | undefined;
  for (const route of table) {
    if (route.method !== method) continue;
    const templateSegments = route.path.split('/').slice(1);
    if (templateSegments.length !== segments.length) continue;
    const pathParameters: Record<string, string> = {};
    let literals = 0;
    const matches = templateSegments.every((template, index) => {
      const segment = segments[index] ?? '';
      const parameter = /^\{(\w+)\}$/.exec(template)?.[1];
      if (parameter) {
        if (segment === '') return false;
        try {
          pathParameters[parameter] = decodeURIComponent(segment);
        } catch {
          return false;
        }
        return true;
      }
      literals++;
      return template === segment;
    });
    if (matches && (!best || literals > best.literals)) best = { route, pathParameters, literals };
  }
  return best && { route: best.route, pathParameters: best.pathParameters };
}
