import { spawn, type SpawnOptions } from 'node:child_process';

type RunOptions = Pick<SpawnOptions, 'cwd' | 'env'>;

function run(command: string, args: readonly string[], options: RunOptions, stderr: 'pipe' | 'inherit'): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', stderr] });
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
      else reject(new Error(`${command} ${args.join(' ')} failed (${signal ?? `exit code ${code}`}):\n${output}`));
    });
  });
}

/**
 * Runs a command to its end and gives its output (stdout and stderr, interleaved). A failure
 * rejects with that output, which is the only place the reason shows.
 */
export function runForOutput(command: string, args: readonly string[], options: RunOptions): Promise<string> {
  return run(command, args, options, 'pipe');
}

/** Runs a command to its end and gives its stdout; its stderr (progress, and the reason of a failure) shows as it comes. */
export function runForStdout(command: string, args: readonly string[], options: RunOptions): Promise<string> {
  return run(command, args, options, 'inherit');
}
