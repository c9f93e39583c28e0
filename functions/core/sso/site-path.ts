/**
 * Stands for the tenant's site while a route is resolved: only whether the origin stays the same
 * matters, and the route itself names none. An `https:` base, so that backslashes count as slashes,
 * as browsers count them.
 */
const siteOrigin = 'https://tenant.invalid';

/** The site's root, where a route that could leave the site leads instead. */
export const siteRoot = () => new URL('/', siteOrigin);

/** Control characters: browsers drop tabs and newlines from URLs and trim the others, changing what a route means. */
const controlCharacter = /\p{Cc}/u;

/** The escapes of `.`, `/` and `\`, in either case, that a server or a proxy may decode before reading a path. */
const escapedSeparator = /%(?:2e|2f|5c)/gi;

/** A path that starts with two slashes (or a slash and a backslash) names a host, not a path. */
const namesAHost = (pathname: string) => /^\/[/\\]/.test(pathname);

/**
 * The URL a route leads to on the tenant's own site, or undefined when it could lead anywhere else.
 * The decision is taken on the route as a browser resolves it (dot segments, `%2e`, backslashes,
 * tabs and newlines dropped), not on what it looks like before: `/.//evil.com` and `/%2e//evil.com`
 * resolve to `//evil.com`, another host. Accepted: a route that starts with `/`, holds no control
 * character, resolves on the same origin to a path that starts with one slash only, and still does
 * once `%2e`, `%2f` and `%5c` are decoded (`/%2f/evil.com` is `//evil.com` to a server that
 * decodes them). The SSO landing redirects only to such routes, and the login URL carries only such routes.
 */
export function resolveSitePath(route: string): URL | undefined {
  if (!route.startsWith('/') || controlCharacter.test(route)) return undefined;
  const resolved = sameOriginUrl(route);
  if (!resolved) return undefined;
  const decoded = sameOriginUrl(resolved.pathname.replace(escapedSeparator, (escape) => decodeURIComponent(escape)));
  return decoded ? resolved : undefined;
}

/** `path` resolved on the site, when it stays there as a path; `//[` does not even parse. */
function sameOriginUrl(path: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(path, siteOrigin);
  } catch {
    return undefined;
  }
  return url.origin === siteOrigin && !namesAHost(url.pathname) ? url : undefined;
}
