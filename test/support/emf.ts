import { vi } from 'vitest';

export type EmfDocument = Record<string, unknown> & { _aws: { CloudWatchMetrics: Array<{ Namespace: string }> } };

/** Runs `run` and returns the EMF documents (CloudWatch embedded metric format) it printed to stdout. */
export async function emfOf(run: () => Promise<unknown>): Promise<EmfDocument[]> {
  const written: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    written.push(String(chunk));
    return true;
  });
  try {
    await run();
  } finally {
    spy.mockRestore();
  }
  return written
    .flatMap((chunk) => chunk.split('\n'))
    .filter((line) => line.includes('"_aws"'))
    .map((line) => JSON.parse(line) as EmfDocument);
}
