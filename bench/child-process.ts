import { spawn, type SpawnOptions } from 'node:child_process';

/**
 * Runs a command to its end and gives its output (stdout and stderr, interleaved). A failure
 * rejects with that output, which is the only place the reason shows.
 */
export function runForOutput(
  command: string,
  args: readonly string[],
  options: Pick<SpawnOptions, 'cwd' | 'env'>,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (code === 0) resolve(output);
      else reject(new Error(`${command} ${args[0] ?? ''} failed (${signal ?? `exit code ${code}`}):\n${output}`));
    });
  });
}
