import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

export const projectRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Runs a project script with Node and tsx, as `npm start` / `npm run admin` do. */
export function runScript(
  script: string,
  args: string[],
  env: Record<string, string | undefined> = {},
  detached = false,
): Started {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: projectRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
  });
  let output = '';
  child.stdout?.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, output: () => output, exited };
}

export async function runToEnd(script: string, args: string[], env: Record<string, string | undefined> = {}) {
  const started = runScript(script, args, env);
  const code = await started.exited;
  return { code, output: started.output() };
}

export interface TwinProcess extends Started {
  url: string;
  /** With `--edge`, the gateway behind the edge. */
  originUrl?: string;
  clientToken: string;
  dynamodbEndpoint: string;
}

/** Starts the twin (`bin/local.ts`) in its own process and waits for its banner. */
/** Kills a twin and its DynamoDB Local (started in a process group of their own) together, as in a crash. */
export function killGroup(twin: TwinProcess): void {
  try {
    process.kill(-(twin.child.pid as number), 'SIGKILL');
  } catch {
    // gone already
  }
}

export async function startTwinProcess(
  args: string[],
  env: Record<string, string | undefined>,
  detached = false,
): Promise<TwinProcess> {
  const started = runScript('bin/local.ts', args, { PORT: '0', ...env }, detached);
  const deadline = Date.now() + 90_000;
  for (;;) {
    const text = started.output();
    const url = /Local twin ready at (\S+)/.exec(text)?.[1];
    const originUrl = /the gateway behind it is ([^\s)]+)/.exec(text)?.[1];
    const clientToken = /Client token:\s+(\S+)/.exec(text)?.[1];
    const dynamodbEndpoint = /DynamoDB Local:\s+(\S+)/.exec(text)?.[1];
    if (url && clientToken && dynamodbEndpoint) return { ...started, url, originUrl, clientToken, dynamodbEndpoint };
    if (started.child.exitCode !== null || Date.now() > deadline) throw new Error(`The twin did not start:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Whether anything still answers HTTP at this address. */
export async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(2_000) });
    return true;
  } catch {
    return false;
  }
}
