import { notFound, ServiceError } from '#functions/core/errors.ts';
import { routeFacts } from './route-facts.generated.ts';
import { matchRoute } from './route-matching.ts';

/** Every route the API serves, as method and path template, from the route facts. */
const served = Object.keys(routeFacts).flatMap((key) => {
  const [method, path] = key.split(' ');
  return method && path ? [{ method, path }] : [];
});

/**
 * The answer to a request no route matches: 405 with `Allow` when other methods take this path
 * (what API Gateway's own `{"message":"Not Found"}` would hide), else 404; both in the error envelope.
 */
export function unmatched(method: string, path: string): ServiceError {
  const allowed = [...new Set(served.filter((route) => matchRoute(route.method, path, [route])).map((route) => route.method))];
  if (allowed.length === 0) return notFound('No route has this path', 'route_not_found');
  const allow = allowed.join(', ');
  return new ServiceError(405, 'method_not_allowed', `${method} is not allowed on this path; it takes ${allow}`, [], { allow });
}
