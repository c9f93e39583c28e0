import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runForOutput } from './child-process.ts';
import { buildBareBundle, loadTimeMs } from './cold-start.ts';

/** Lambda cold starts grow with the code they load; this is the size each function should stay under. */
export const bundleBudgetBytes = 500 * 1024;
/** A function's module load may take at most this many times a bare bundle's (the DynamoDB client alone). */
export const loadBudgetRatio = 1.3;

export interface BundleSize {
  /** The function's logical id without CloudFormation's 8-hex hash suffix, e.g. `GetTenant`. */
  functionId: string;
  assetPath: string;
  bytes: number;
  overBudget: boolean;
  /** Median time a fresh Node.js process takes to import the bundle (cold-start module load). */
  loadMs: number;
  /** The same of a bare function that only creates the DynamoDB client, loaded in turn with this one. */
  bareMs: number;
}

export interface BundleMeasurements {
  bundles: BundleSize[];
}

interface Template {
  Resources: Record<string, { Type: string; Properties?: { Handler?: unknown }; Metadata?: Record<string, unknown> }>;
}

/**
 * Synthesizes the stack into a temporary directory and measures every function's bundled index.mjs:
 * its size and how long a fresh process takes to load it.
 */
export async function measureBundles(projectRoot: string, environment: NodeJS.ProcessEnv): Promise<BundleMeasurements> {
  const outDir = await mkdtemp(join(tmpdir(), 'bench-synth-'));
  try {
    await synth(projectRoot, outDir, environment);
    const bare = await buildBareBundle(projectRoot, await mkdtemp(join(outDir, 'bare-')));
    // The service's stack and its nested stacks (lib/function-stacks.ts), where the functions are.
    const templateFiles = (await readdir(outDir)).filter(
      (file) => file === 'BiTenantAdmin-dev.template.json' || file.endsWith('.nested.template.json'),
    );
    const resources = (
      await Promise.all(templateFiles.map(async (file) => JSON.parse(await readFile(join(outDir, file), 'utf8')) as Template))
    ).flatMap((template) => Object.entries(template.Resources));
    const sizes: BundleSize[] = [];
    for (const [logicalId, resource] of resources) {
      // Ours run `index.handler`; the CDK's own (a custom resource provider's framework.onEvent) are not ours to size.
      if (resource.Type !== 'AWS::Lambda::Function' || resource.Properties?.Handler !== 'index.handler') continue;
      const assetPath = resource.Metadata?.['aws:asset:path'];
      if (typeof assetPath !== 'string') throw new Error(`${logicalId} has no aws:asset:path metadata`);
      const file = join(outDir, assetPath, 'index.mjs');
      const { size } = await stat(file);
      sizes.push({
        functionId: logicalId.replace(/[0-9A-F]{8}$/, ''),
        assetPath,
        bytes: size,
        overBudget: size > bundleBudgetBytes,
        ...(await loadTimeMs(file, bare)),
      });
    }
    return { bundles: sizes };
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

/** `cdk synth` prints its own and esbuild's warnings: kept, and shown only if synth fails. */
async function synth(projectRoot: string, outDir: string, environment: NodeJS.ProcessEnv): Promise<void> {
  await runForOutput('npx', ['cdk', 'synth', '-q', '-o', outDir], { cwd: projectRoot, env: environment });
}
