/**
 * The dispatcher's scale settings. The stack sets them on every function from CDK context (see
 * lib/deployment-settings.ts, which checks them against the same limits at synth); the twin and the
 * tests use the defaults. docs/schedules.md, section "At scale", says how to size them.
 */
export interface DispatchSettings {
  /**
   * Partitions of the due-schedules index. Each fire rewrites its schedule's index entry on its
   * shard, and one index partition takes about 1,000 writes a second, so this bounds the fires a
   * second the table absorbs; each tick reads every shard. Lowering it is safe: the tick keeps
   * reading as many shards as any deployment wrote to (schedule-repository.ts, dispatchShardCount),
   * and entries move to the lower shards as they fire.
   */
  dueShards: number;
  /** Index entries one Query of a shard returns: the tick sends each page to the fire queue before reading the next. */
  duePageSize: number;
}

export const dispatchSettingLimits: Record<keyof DispatchSettings, WholeNumberLimits> = {
  dueShards: { fallback: 16, min: 1, max: 256 },
  duePageSize: { fallback: 500, min: 10, max: 1000 },
};

/** The environment variable that carries each setting to the functions. */
export const dispatchSettingVariables: Record<keyof DispatchSettings, string> = {
  dueShards: 'DUE_SHARDS',
  duePageSize: 'DUE_PAGE_SIZE',
};

export interface WholeNumberLimits {
  fallback: number;
  min: number;
  max: number;
}

/** A setting's value: the fallback when unset, else a whole number within the limits (a string or a number). */
export function wholeNumberSetting(name: string, raw: unknown, { fallback, min, max }: WholeNumberLimits): number {
  if (raw === undefined || raw === '') return fallback;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' ? Number(raw.trim()) : Number.NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be a whole number from ${min} to ${max}, not "${String(raw)}"`);
  }
  return value;
}

const fromEnvironment = (name: keyof DispatchSettings) =>
  wholeNumberSetting(dispatchSettingVariables[name], process.env[dispatchSettingVariables[name]], dispatchSettingLimits[name]);

let cached: DispatchSettings | undefined;

/** Read from the environment once per cold start; a bad value fails there. */
export function dispatchSettings(): DispatchSettings {
  cached ??= {
    dueShards: fromEnvironment('dueShards'),
    duePageSize: fromEnvironment('duePageSize'),
  };
  return cached;
}
