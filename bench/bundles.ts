import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runForOutput } from './child-process.ts';
import { baselineLoadTimeMs, loadTimeMs } from './cold-start.ts';

/** Lambda cold starts grow with the code they load; this is the size each function should stay under. */
export const bundleBudgetBytes = 500 * 1024;

export interface BundleSize {
  /** The function's logical id without CloudFormation's 8-hex hash suffix, e.g. `GetTenant`. */
  functionId: string;
  assetPath: string;
  bytes: number;
  overBudget: boolean;
  /** Median time a fresh Node.js process takes to import the bundle (cold-start module load). */
  loadMs: number;
}

export interface BundleMeasurements {
  bundles: BundleSize[];
  /** The same, for a bare function that only creates the DynamoDB client. */
  baselineLoadMs: number;
}

interface Template {
  Resources: Record<string, { Type: string; Metadata?: Record<string, unknown> }>;
}

/**
 * Synthesizes the stack into a temporary directory and measures every function's bundled index.mjs:
 * its size and how long a fresh process takes to load it.
 */
export async function measureBundles(projectRoot: string, environment: NodeJS.ProcessEnv): Promise<BundleMeasurements> {
  const outDir = await mkdtemp(join(tmpdir(), 'bench-synth-'));
  try {
    await synth(projectRoot, outDir, environment);
    // The service's stack and its nested stacks (lib/function-stacks.ts), where the functions are.
    const templateFiles = (await readdir(outDir)).filter(
      (file) => file === 'BiTenantAdmin-dev.template.json' || file.endsWith('.nested.template.json'),
    );
    const resources = (
      await Promise.all(templateFiles.map(async (file) => JSON.parse(await readFile(join(outDir, file), 'utf8')) as Template))
    ).flatMap((template) => Object.entries(template.Resources));
    const sizes: BundleSize[] = [];
    for (const [logicalId, resource] of resources) {
      if (resource.Type !== 'AWS::Lambda::Function') continue;
      const assetPath = resource.Metadata?.['aws:asset:path'];
      if (typeof assetPath !== 'string') throw new Error(`${logicalId} has no aws:asset:path metadata`);
      const file = join(outDir, assetPath, 'index.mjs');
      const { size } = await stat(file);
      sizes.push({
        functionId: logicalId.replace(/[0-9A-F]{8}$/, ''),
        assetPath,
        bytes: size,
        overBudget: size > bundleBudgetBytes,
        loadMs: await loadTimeMs(file),
      });
    }
    return { bundles: sizes, baselineLoadMs: await baselineLoadTimeMs(projectRoot) };
  } finally {
    await rm(outDir, { recursive: true, force: true });
  }
}

/** `cdk synth` prints esbuild's and npm's chatter: kept, and shown only if synth fails. */
async function synth(projectRoot: string, outDir: string, environment: NodeJS.ProcessEnv): Promise<void> {
  await runForOutput('npx', ['cdk', 'synth', '-q', '-o', outDir], { cwd: projectRoot, env: environment });
}
