import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import { projectRoot } from './processes.ts';

/**
 * Runs one of the README's curl sessions exactly as written, with `PORT` set to the given twin's (each
 * block takes its address from it, as the README says) and only the client token swapped for the
 * twin's (and the given replacements), in a scratch folder that sees the project's examples.
 * Returns what it printed.
 */
export async function runReadmeSession(
  name: string,
  twin: { url: string; clientToken: string },
  /** Other literal swaps, e.g. a fixed port for a free one. */
  replacements: Record<string, string> = {},
): Promise<string> {
  const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
  const block = new RegExp(`<!-- readme-session: ${name}\\b[^>]*-->\\s*\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(readme)?.[1];
  expect(block, `README block ${name}`).toBeDefined();
  // The address is set once, from PORT, and never written out again.
  expect(block).toContain('URL=http://localhost:${PORT:-3000}');
  expect(block).not.toContain('localhost:3000');
  const script = Object.entries(replacements).reduce(
    (text, [from, to]) => text.replaceAll(from, to),
    (block ?? '').replaceAll('cli_local_demo_token_0123456789', twin.clientToken),
  );
  const workDir = mkdtempSync(join(tmpdir(), 'readme-'));
  symlinkSync(join(projectRoot, 'examples'), join(workDir, 'examples'));
  try {
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: workDir,
      env: { ...process.env, PORT: new URL(twin.url).port },
    });
    return stdout;
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}
