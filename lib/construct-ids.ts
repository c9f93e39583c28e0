import type { Route } from '#functions/routes.ts';

/** `dead letter` or `reload-worker` becomes `DeadLetter` or `ReloadWorker`: a construct id's spelling. */
export const pascalCase = (text: string) =>
  text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((word) => word[0]?.toUpperCase() + word.slice(1))
    .join('');

/** `GET /tenants/{id}/token` becomes `GetTenantsIdToken`: stable, readable construct ids. */
export function functionIdOf(route: Pick<Route, 'method' | 'path'>): string {
  return pascalCase(`${route.method.toLowerCase()} ${route.path}`);
}

/** `reload-worker` becomes `ReloadWorker` (queue consumers and timed functions). */
export const consumerIdOf = (handler: string) => pascalCase(handler);
