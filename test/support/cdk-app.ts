import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, type AppProps } from 'aws-cdk-lib';
import { afterAll } from 'vitest';

/**
 * Every synthesis writes a cloud assembly (about 1.3 MB); an App without an outdir writes it to a
 * fresh /tmp/cdk.outXXXX that nothing removes. The test file that imports this module gets one
 * folder for all its apps, removed when the file is done.
 */
const assemblies = mkdtempSync(join(tmpdir(), 'service-tests-cdk-'));
afterAll(() => rmSync(assemblies, { recursive: true, force: true }));

/**
 * An App for a test: assets are not bundled (template assertions take milliseconds) unless `bundle` is set, and
 * no tree.json is written (1.7 MB that no test reads, a tenth of each synthesis's time).
 */
export function testApp(context: Record<string, unknown> = {}, options: { bundle?: boolean } = {}): App {
  const props: AppProps = {
    outdir: mkdtempSync(join(assemblies, 'app-')),
    treeMetadata: false,
    context: options.bundle ? context : { 'aws:cdk:bundling-stacks': [], ...context },
  };
  return new App(props);
}
