import { settingsFromEnvironment, type WholeNumberLimits } from '#functions/core/environment-settings.ts';

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

/** Read from the environment once per cold start; a bad value fails there. */
export const dispatchSettings: () => DispatchSettings = settingsFromEnvironment(dispatchSettingLimits, dispatchSettingVariables);
