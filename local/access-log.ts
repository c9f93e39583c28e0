/** What stands for a credential in a log line. */
const redacted = '[redacted]';

/** A login JWT (three base64url parts) or one of our bearer tokens and secrets, by their prefixes. */
const credentialLike = /^(?:eyJ[\w-]*\.[\w-]+\.[\w-]+|(?:cli|ten|agt|whsec)_[\w-]{8,})$/;

/** Query parameters whose value is a credential whatever it looks like. */
const credentialName = /token|secret|password|session|signature|credential|auth|code|key/i;

/**
 * The request target (path and query) as an access line may show it: the login token of the SSO
 * landing (`/auth/api/<JWT>`), any path segment or query value that looks like a token, and the
 * values of query parameters named like credentials are replaced, so that a log copied around
 * opens no session (a login JWT stays valid for an hour and can be used more than once).
 */
export function redactedTarget(target: string): string {
  let url: URL;
  try {
    // Appended, not resolved: a target such as `//x/y` is a path here, not a host.
    url = new URL(`http://twin.invalid${target.startsWith('/') ? '' : '/'}${target}`);
  } catch {
    return redacted;
  }
  const segments = url.pathname.split('/');
  const path = segments
    .map((segment, index) =>
      (index > 0 && segments[index - 2] === 'auth' && segments[index - 1] === 'api') || looksLikeCredential(segment)
        ? redacted
        : segment,
    )
    .join('/');
  const query = [...url.searchParams]
    .map(([name, value]) => `${name}=${credentialName.test(name) || looksLikeCredential(value) ? redacted : value}`)
    .join('&');
  return `${path}${query ? `?${query}` : ''}`;
}

function looksLikeCredential(text: string): boolean {
  let decoded = text;
  try {
    decoded = decodeURIComponent(text);
  } catch {
    // not percent-encoded text: judged as it is
  }
  return credentialLike.test(decoded);
}

/** The twin's line per HTTP request: method, redacted target, status, duration. */
export const accessLine = (method: string | undefined, target: string | undefined, status: number, durationMs: number) =>
  `${method ?? '?'} ${redactedTarget(target ?? '/')} ${status} ${durationMs}ms`;
