/** Runs `task` for 0..count-1, `parallel` at a time, and gives its results in order. */
export async function each<T>(count: number, task: (index: number) => Promise<T>, parallel = 8): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  const worker = async () => {
    for (let index = next++; index < count; index = next++) results[index] = await task(index);
  };
  await Promise.all(Array.from({ length: Math.min(parallel, count) }, worker));
  return results;
}
