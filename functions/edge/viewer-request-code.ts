import { readFileSync } from 'node:fs';
import { type Route, takesNoToken } from '#functions/routes.ts';

/** What the edge function is told at synth (functions/edge/viewer-request.js). */
export interface EdgeSettings {
  /**
   * The paths that take no token, which pass untouched whatever their Authorization header: an
   * entry ending in `/` is a prefix, any other an exact path (`anonymousPathsOf` derives them).
   */
  anonymousPaths: readonly string[];
  /** Whether tokens of the unsigned form pass to the origin (UNSIGNED_TOKENS=accept there) or are refused here. */
  acceptUnsigned: boolean;
}

/** The runtime the function is written for (CloudFront's FunctionConfig.Runtime). */
export const edgeFunctionRuntime = 'cloudfront-js-2.0';
/** CloudFront's quota on a function's code (Quotas, CloudFront Functions: maximum function size). */
export const maxEdgeFunctionBytes = 10 * 1024;

const sourceFile = new URL('./viewer-request.js', import.meta.url);
const placeholder = 'var settings = __EDGE_SETTINGS__;';

/**
 * The viewer-request function's code exactly as CloudFront gets it: the source with its settings
 * line replaced by `settings` as one JSON literal, and its comments (whole comment lines and the
 * header block, which cite the runtime's documentation) left out to keep within the 10 KB quota.
 * Throws when the result is over the quota, so a synth fails rather than the deployment.
 */
export function viewerRequestCode(settings: EdgeSettings): string {
  const source = readFileSync(sourceFile, 'utf8');
  if (source.split(placeholder).length !== 2) throw new Error(`viewer-request.js must hold the line ${placeholder} once`);
  const settingsLine = `var settings = ${JSON.stringify({
    anonymousPaths: settings.anonymousPaths,
    acceptUnsigned: settings.acceptUnsigned,
  })};`;
  const code = source
    .replace(/^\/\*\*[\s\S]*?\*\/\n/, '')
    .split('\n')
    .filter((line) => !/^\s*\/\//.test(line))
    .join('\n')
    .replace(placeholder, () => settingsLine);
  const bytes = Buffer.byteLength(code, 'utf8');
  if (bytes > maxEdgeFunctionBytes)
    throw new Error(`The edge function is ${bytes} bytes, over CloudFront's ${maxEdgeFunctionBytes}`);
  return code;
}

/**
 * The anonymous paths of a route table, as `EdgeSettings.anonymousPaths` (and the edge firewall)
 * take them: the paths of the rows that take no token, each exact, or, when it has a
 * `{parameter}`, the prefix up to the `/` before it (`/auth/api/{token}` is `/auth/api/`).
 */
export function anonymousPathsOf(routes: readonly Pick<Route, 'path' | 'auth'>[]): string[] {
  const paths = routes.filter(takesNoToken).map((route) => {
    const parameter = route.path.indexOf('{');
    return parameter === -1 ? route.path : route.path.slice(0, route.path.lastIndexOf('/', parameter) + 1);
  });
  return [...new Set(paths)].sort();
}
