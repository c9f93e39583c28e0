/**
 * The error codes each route can answer, found in what its function really contains: every handler is
 * bundled as the stack bundles it (ESM, tree-shaken, dependencies left out since none of them names a
 * code of ours), and a code counts when the bundle spells it. A code that only an unused export of a
 * shared module throws is shaken out with that export; the catalog (functions/core/error-codes.ts)
 * is imported as types only, so it adds none. What no handler can throw is not listed, and a route
 * cannot forget one it can: nothing is written by hand. The contract check (test/support/documented.ts)
 * then holds every real answer to its route's list.
 */
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import { type ErrorCode, errorCodes } from '#functions/core/error-codes.ts';
import type { Route } from '#functions/routes.ts';

/**
 * The request pipeline's own modules are in every bundle whatever the route takes; what they can
 * refuse follows from the route's row instead (a body, an Idempotency-Key, a token), so they are
 * left out of the scan and their codes come from `pipelineCodes`.
 */
const pipelineModules = new Set([
  'functions/core/api/request-body.ts',
  'functions/core/api/validation.ts',
  'functions/core/api/idempotency.ts',
  'functions/core/api/idempotency-repository.ts',
  'functions/core/auth/principals.ts',
]);

/** What the scan needs of a route: the unmatched route's row has no body or Idempotency-Key to say. */
type ScannedRoute = Pick<Route, 'handler' | 'auth'> & Partial<Pick<Route, 'body' | 'idempotent'>>;

function pipelineCodes(route: ScannedRoute): ErrorCode[] {
  return [
    ...(route.body
      ? (['malformed_body', 'malformed_json', 'validation_failed', 'payload_too_large', 'unsupported_media_type'] as const)
      : []),
    ...(route.idempotent
      ? ([
          'invalid_idempotency_key',
          'idempotency_key_reused',
          'idempotency_key_in_progress',
          'idempotency_answer_not_kept',
        ] as const)
      : []),
    ...(route.auth.length > 0 ? (['unauthorized', 'wrong_token_kind'] as const) : []),
    // The token of a deleted tenant: `Tenant not found`.
    ...(route.auth.includes('tenant') ? (['tenant_not_found'] as const) : []),
    // What the error middleware answers to anything unexpected.
    'internal_error',
  ];
}

/**
 * The helpers of errors.ts whose code is fixed: their code is spelled once, in errors.ts, whoever
 * calls them, so a call counts as the code (errors.ts itself is not scanned). `supersededAttempt` is
 * not here: only an Idempotency-Key's record leads to it, and the `idempotent` fact accounts for it.
 */
const fixedCodeHelpers: Readonly<Record<string, ErrorCode>> = {
  unauthorized: 'unauthorized',
  payloadTooLarge: 'payload_too_large',
  unsupportedMediaType: 'unsupported_media_type',
};

const errorsModule = 'functions/core/errors.ts';

const quoted = /["'`]([a-z][a-z_]*[a-z])["'`]/g;
// esbuild renames a helper on a clash by adding digits: notFound2.
const helperCall = /\b([A-Za-z]+)\d*\(/g;
/** Where esbuild starts a module's code in a bundle that is not minified. */
const moduleMarker = /^\/\/ (\S+)$/;
/** Only the service's own code can throw; data a bundle carries (the OpenAPI document, a validator's messages) cannot. */
const ownCode = /^functions\/.*\.ts$/;

/** The codes a bundle's code spells, split into what the pipeline modules spell and what the rest does. */
function spelledCodes(text: string): { pipeline: Set<string>; own: Set<string>; helpers: Set<string> } {
  const spelled = { pipeline: new Set<string>(), own: new Set<string>(), helpers: new Set<string>() };
  let module = '';
  for (const line of text.split('\n')) {
    module = moduleMarker.exec(line)?.[1] ?? module;
    if (!ownCode.test(module)) continue;
    const into = module === errorsModule ? spelled.helpers : pipelineModules.has(module) ? spelled.pipeline : spelled.own;
    for (const [, word] of line.matchAll(quoted)) if (word && Object.hasOwn(errorCodes, word)) into.add(word);
    if (into !== spelled.own) continue;
    for (const [, name] of line.matchAll(helperCall)) {
      if (name && Object.hasOwn(fixedCodeHelpers, name)) into.add(fixedCodeHelpers[name] as ErrorCode);
    }
  }
  return spelled;
}

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Each handler's bundle, as the stack builds it but neither minified nor written, by handler name: one
 * esbuild run for them all (one run per handler took most of the document's generation).
 */
function bundlesOf(handlers: readonly string[]): Map<string, string> {
  const outdir = 'bundles';
  const { outputFiles } = buildSync({
    entryPoints: Object.fromEntries(handlers.map((handler) => [handler, `functions/http/${handler}.ts`])),
    outdir,
    // Module markers name files relative to it: `// functions/core/errors.ts`.
    absWorkingDir: repositoryRoot,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  });
  const byPath = new Map(outputFiles.map((file) => [file.path, file.text]));
  return new Map(
    handlers.map((handler) => {
      const text = byPath.get(join(repositoryRoot, outdir, `${handler}.js`));
      if (text === undefined) throw new Error(`esbuild wrote no bundle for functions/http/${handler}.ts`);
      return [handler, text];
    }),
  );
}

/** Each route's error codes, in the catalog's order. */
export function routeErrorCodes<Scanned extends ScannedRoute>(routes: readonly Scanned[]): Map<Scanned, ErrorCode[]> {
  const catalog = Object.keys(errorCodes) as ErrorCode[];
  const everything = new Set(routes.flatMap(pipelineCodes));
  const bundles = bundlesOf([...new Set(routes.map((route) => route.handler))]);
  const codes = new Map<Scanned, ErrorCode[]>();
  for (const route of routes) {
    const { pipeline, own, helpers } = spelledCodes(bundles.get(route.handler) as string);
    const unexplained = [...pipeline].filter((code) => !everything.has(code as ErrorCode));
    if (unexplained.length > 0)
      throw new Error(`The request pipeline spells ${unexplained.join(', ')}, which no fact of a route's row accounts for`);
    const fixed = Object.values(fixedCodeHelpers);
    const unlisted = [...helpers].filter((code) => !fixed.includes(code as ErrorCode) && !everything.has(code as ErrorCode));
    if (unlisted.length > 0) throw new Error(`${errorsModule} spells ${unlisted.join(', ')}: add its helper to fixedCodeHelpers`);
    const fromRow = pipelineCodes(route);
    codes.set(
      route,
      catalog.filter((code) => own.has(code) || fromRow.includes(code)),
    );
  }
  return codes;
}
