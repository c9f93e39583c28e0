import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetHashType, DockerImage, type ILocalBundling } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { type BuildOptions, buildSync } from 'esbuild';
import { queueConsumers, routes, timedFunctions, unmatchedRoute } from '#functions/routes.ts';

/**
 * The functions' code: each function's handler bundled by esbuild into one index.mjs (ESM for Node.js 22, minified,
 * with its source map), plus the package files it reads at run time.
 *
 * The service stack's functions (every row of the route table) are bundled in one esbuild run, when the first of them
 * is staged: the run reads each module they share (the SDK, functions/core) once. The CDK's NodejsFunction ran esbuild
 * once per function, reading them all again each time: about 0.5 s a function, a minute of every `cdk synth` (105
 * functions), where the one run takes about 5 s. The output is the same: the same options, one output per entry.
 */

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const resolvePackageFile = createRequire(import.meta.url).resolve;

/** The handler file of a route's function, from the project root. */
export const routeEntry = (handler: string) => `functions/http/${handler}.ts`;
/** The handler file of a queue consumer's or a timed function's function, from the project root. */
export const workerEntry = (handler: string) => `functions/workers/${handler}.ts`;

/** Every function the service stack makes from the route table: bundled together. */
const serviceEntries: ReadonlySet<string> = new Set([
  ...[...routes, unmatchedRoute].map((route) => routeEntry(route.handler)),
  ...[...queueConsumers, ...timedFunctions].map((worker) => workerEntry(worker.handler)),
]);

/** Modules the bundles take in place of what Node.js would load: smaller, for the same behaviour on Lambda. */
const lambdaAliases = {
  // Credentials from the environment only, as Lambda provides them: see that module.
  '@aws-sdk/credential-provider-node': join(projectRoot, 'functions/core/lambda-credentials.ts'),
  // The package's ES module build of the same code: its "node" export is CommonJS, which esbuild cannot tree-shake.
  yaml: join(dirname(resolvePackageFile('yaml/package.json')), 'browser', 'index.js'),
};

const buildOptions = {
  absWorkingDir: projectRoot,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  sourcemap: true,
  mainFields: ['module', 'main'],
  // The SDK is bundled at the version the tests ran against, not taken from the runtime. All but its event-stream
  // code (about 20 KB), which @smithy/core's HttpProtocol imports dynamically for event-stream operations only:
  // no function calls one, and an import() of a module left out fails only if it runs.
  external: ['@smithy/core/event-streams'],
  alias: lambdaAliases,
  // Some CommonJS dependencies call require() on Node built-ins; give ESM output one.
  banner: { js: "import{createRequire}from'node:module';const require=createRequire(import.meta.url);" },
  outExtension: { '.js': '.mjs' },
  // Errors and warnings only: a size table per function is noise in every synth.
  logLevel: 'warning',
  write: false,
} as const satisfies BuildOptions;

/** The key esbuild writes an entry under: a folder of the assets directory, so that `index.mjs` sits where the asset will. */
const outputKey = (entry: string) => `${entry.replace(/[/.]/g, '-')}/index`;

/** A file of a bundle: index.mjs or its source map. */
interface BundleFile {
  name: string;
  contents: Uint8Array;
}

/** The files of each bundle built and not yet staged, by entry, for each assets directory (one per synthesized app). */
const unstaged = new Map<string, Map<string, BundleFile[]>>();

/** Runs esbuild for `entries`, its outputs placed as if under `assetsDirectory` (source maps name sources relative to it). */
function build(entries: readonly string[], assetsDirectory: string): Map<string, BundleFile[]> {
  const { outputFiles } = buildSync({
    ...buildOptions,
    entryPoints: Object.fromEntries(entries.map((entry) => [outputKey(entry), entry])),
    outdir: assetsDirectory,
  });
  const entryOfFolder = new Map(entries.map((entry) => [dirname(outputKey(entry)), entry]));
  const byEntry = new Map<string, BundleFile[]>(entries.map((entry) => [entry, []]));
  for (const file of outputFiles) {
    const entry = entryOfFolder.get(dirname(relative(assetsDirectory, file.path)));
    if (entry === undefined) throw new Error(`esbuild wrote ${file.path}, which is no entry's`);
    byEntry.get(entry)?.push({ name: basename(file.path), contents: file.contents });
  }
  return byEntry;
}

/** The bundle of `entry`, built with the rest of the service's if it is one of them and they are not built yet. */
function bundleOf(entry: string, assetsDirectory: string): BundleFile[] {
  if (serviceEntries.has(entry) && !unstaged.has(assetsDirectory))
    unstaged.set(assetsDirectory, build([...serviceEntries], assetsDirectory));
  const files = unstaged.get(assetsDirectory)?.get(entry);
  // Staged once; an entry outside the service's (the edge's and the deploy's few functions), or staged again, alone.
  if (files) {
    unstaged.get(assetsDirectory)?.delete(entry);
    return files;
  }
  return build([entry], assetsDirectory).get(entry) ?? [];
}

/**
 * How the CDK bundles a function's asset, here rather than in Docker. Its fields are part of the options the CDK keys
 * its staged assets by (two functions with the same options would share one asset): the entry tells them apart.
 */
class LocalBundling implements ILocalBundling {
  constructor(
    readonly entry: string,
    readonly packageFiles: readonly string[],
  ) {}

  tryBundle(outputDirectory: string): boolean {
    mkdirSync(outputDirectory, { recursive: true });
    for (const file of bundleOf(this.entry, dirname(outputDirectory)))
      writeFileSync(join(outputDirectory, file.name), file.contents);
    for (const file of this.packageFiles) copyFileSync(resolvePackageFile(file), join(outputDirectory, basename(file)));
    return true;
  }
}

/**
 * The code of the function whose handler is `entry` (a path from the project root), with `packageFiles` (files of
 * installed packages, `package/file`) copied beside index.mjs.
 */
export function functionCode(entry: string, packageFiles: readonly string[] = []): Code {
  return Code.fromAsset(projectRoot, {
    // Named by the bundle's hash: a function whose bundle did not change is neither uploaded nor updated again.
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never pulled: local bundling always bundles (or fails the synth), with the esbuild the project installs.
      image: DockerImage.fromRegistry('dummy'),
      local: new LocalBundling(entry, packageFiles),
    },
  });
}
