import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { App, type AppProps } from 'aws-cdk-lib';
import { inject } from 'vitest';

/**
 * Every synthesis writes a cloud assembly; an App without an outdir writes it to a fresh /tmp/cdk.outXXXX that
 * nothing removes. Each goes into the run's folder (test/support/cdk-global-setup.ts), removed when the run ends.
 */
const assemblies = inject('cdkAssemblies');

/**
 * What no test reads, and each synthesis spent a quarter of its time on: a stack trace of every resource's creation
 * and of every annotation (for debugging a synth), and tree.json (1.7 MB).
 */
const unreadMetadata = { 'aws:cdk:disable-creation-stack-traces': true, 'aws:cdk:disable-stack-trace': true };

/** An App for a test: assets are not bundled (template assertions take milliseconds) unless `bundle` is set. */
export function testApp(context: Record<string, unknown> = {}, options: { bundle?: boolean } = {}): App {
  const props: AppProps = {
    outdir: mkdtempSync(join(assemblies, 'app-')),
    treeMetadata: false,
    context: { ...unreadMetadata, ...(options.bundle ? {} : { 'aws:cdk:bundling-stacks': [] }), ...context },
  };
  return new App(props);
}
