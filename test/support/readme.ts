import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { projectRoot } from './processes.ts';

const readme = () => readFileSync(join(projectRoot, 'README.md'), 'utf8');

/** Every shell block of the README (a ```sh fence), as written. */
export const readmeShellBlocks = (): string[] =>
  [...readme().matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map(([, block]) => block ?? '');

/** The names of the README's sessions: the shell blocks marked `<!-- readme-session: name … -->`. */
export const readmeSessionNames = (): string[] =>
  [...readme().matchAll(/<!-- readme-session: (\S+)/g)].map(([, name]) => name ?? '');

/** What one paste of a block printed on stdout, and the status it ended with. */
export interface Paste {
  output: string;
  status: number;
}

/** Printed by the shell after each paste, with the paste's status; no block prints it. */
const pasteEnd = 'readme-session-paste-ended';

/**
 * Pastes one of the README's sessions `times` times in a row into one bash, as a reader does into a
 * terminal: no shell options, the block exactly as written with `PORT` set to the given twin's (each
 * block takes its address from it, as the README says) and only the client token swapped for the
 * twin's (and the given replacements), in a scratch folder that sees the project's examples. Asserts
 * that no paste closed the shell and that nothing was left in the folder; returns each paste and
 * what the shell wrote to stderr.
 */
export async function pasteReadmeSession(
  name: string,
  twin: { url: string; clientToken: string },
  options: {
    times?: number;
    /** Other literal swaps, e.g. a fixed port for a free one. */
    replacements?: Record<string, string>;
  } = {},
): Promise<{ pastes: Paste[]; stderr: string }> {
  const { times = 1, replacements = {} } = options;
  const block = new RegExp(`<!-- readme-session: ${name}\\b[^>]*-->\\s*\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(readme())?.[1];
  expect(block, `README block ${name}`).toBeDefined();
  // The address is set once, from PORT, and never written out again.
  expect(block).toContain('URL=http://localhost:${PORT:-3000}');
  expect(block).not.toContain('localhost:3000');
  const pasted = Object.entries(replacements).reduce(
    (text, [from, to]) => text.replaceAll(from, to),
    (block ?? '').replaceAll('cli_local_demo_token_0123456789', twin.clientToken),
  );
  const script = Array.from({ length: times }, () => `${pasted}printf '\\n${pasteEnd} %s\\n' $?\n`).join('');
  const workDir = mkdtempSync(join(tmpdir(), 'readme-'));
  symlinkSync(join(projectRoot, 'examples'), join(workDir, 'examples'));
  try {
    // The shell's own status says nothing more than the markers: a paste that closed it leaves one out.
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
      execFile(
        'bash',
        ['-c', script],
        { cwd: workDir, env: { ...process.env, PORT: new URL(twin.url).port } },
        (_error, stdout, stderr) => resolve({ stdout, stderr }),
      );
    });
    const parts = stdout.split(new RegExp(`\\n${pasteEnd} (\\d+)\\n`));
    const pastes = Array.from({ length: (parts.length - 1) / 2 }, (_, index) => ({
      output: parts[2 * index] ?? '',
      status: Number(parts[2 * index + 1]),
    }));
    expect(pastes.length, `the shell was closed by a paste of ${name}:\n${stderr}`).toBe(times);
    expect(
      readdirSync(workDir).filter((entry) => entry !== 'examples'),
      `what ${name} left behind`,
    ).toEqual([]);
    return { pastes, stderr };
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

/** Pastes a session `times` times in a row (see pasteReadmeSession); each paste must succeed. Returns what each printed. */
export async function runReadmeSessionPastes(
  name: string,
  twin: { url: string; clientToken: string },
  times: number,
  replacements: Record<string, string> = {},
): Promise<string[]> {
  const { pastes, stderr } = await pasteReadmeSession(name, twin, { times, replacements });
  pastes.forEach((paste, index) => expect(paste.status, `paste ${index + 1} of ${name} failed:\n${stderr}`).toBe(0));
  return pastes.map((paste) => paste.output);
}
