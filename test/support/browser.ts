import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { inject } from 'vitest';

/**
 * The Chromium the browser tests drive: `CHROMIUM_PATH` when set, else Debian's `/usr/bin/chromium`
 * when installed, else the one the `@sparticuz/chromium` devDependency ships inside its npm
 * tarball (unpacked to /tmp on first use, about 2 s), so `npm ci && npm test` needs no system
 * browser. playwright-core drives it and downloads nothing. The global setup resolves it once per
 * run: two test files unpacking it at the same time would trip over each other.
 */
export async function chromiumExecutable(): Promise<string> {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) {
    if (!existsSync(configured)) throw new Error(`CHROMIUM_PATH is ${configured}, which does not exist`);
    return configured;
  }
  if (existsSync('/usr/bin/chromium')) return '/usr/bin/chromium';
  const { default: packaged } = await import('@sparticuz/chromium');
  return packaged.executablePath();
}

/**
 * Our flags, not the package's `args`: those are for Lambda (one process, no sandbox) and include
 * `--disable-web-security`, which would blind the tests that check the pages' Content Security
 * Policy and origins.
 */
const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A headless Chromium; the caller closes it. */
export function launchChromium(): Promise<Browser> {
  const found = inject('chromium');
  if ('problem' in found) {
    throw new Error(`No browser for this test (${found.problem}); set CHROMIUM_PATH to a Chromium or Chrome executable.`);
  }
  return chromium.launch({ executablePath: found.path, args: chromiumArgs });
}
