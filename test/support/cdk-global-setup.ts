import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder the tests' CDK apps write their cloud assemblies in (test/support/cdk-app.ts). */
    cdkAssemblies: string;
  }
}

/**
 * One folder for every cloud assembly the project's test files synthesize (about 1 MB each), removed when the
 * run ends. Not per file: the infrastructure files share their workers' modules (vitest.config.ts), and with them
 * the apps test/support/stages.ts keeps, which a later file may synthesize again.
 */
export default function setup(project: TestProject) {
  const assemblies = mkdtempSync(join(tmpdir(), 'service-tests-cdk-'));
  project.provide('cdkAssemblies', assemblies);
  return () => rmSync(assemblies, { recursive: true, force: true });
}
