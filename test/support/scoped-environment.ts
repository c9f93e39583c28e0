/**
 * Runs `work` with `variables` set in the environment, and puts back what was there when it ends, however it
 * ends (a variable that was unset is unset again). The connected files share their worker's process
 * (vitest.config.ts): a file may change the environment this way without a process of its own, as
 * test/support/test-projects.ts says.
 */
export async function withEnvironment<T>(variables: Readonly<Record<string, string>>, work: () => Promise<T>): Promise<T> {
  const previous = Object.keys(variables).map((name) => [name, process.env[name]] as const);
  Object.assign(process.env, variables);
  try {
    return await work();
  } finally {
    for (const [name, value] of previous) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}
