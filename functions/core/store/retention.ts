import { settingsFromEnvironment, type WholeNumberLimits } from '#functions/core/environment-settings.ts';

/**
 * How long the records that pile up with use are kept: every one is written with `expiresAt`
 * (epoch seconds, the table's TTL attribute) and DynamoDB deletes it after that, so the table's
 * size levels off instead of growing with every run and delivery. The stack sets them on every
 * function from CDK context (lib/deployment-settings.ts checks the same limits at synth); the twin
 * and the tests use the defaults. docs/operations.md, section Cost and storage, says what they cost.
 */
export interface RetentionSettings {
  /** Runs: the loads handed to agents (`RUN#`) and the schedules' fires (`SCHEDRUN#`). */
  runRetentionDays: number;
  /** Webhook deliveries, their bodies with them. */
  deliveryRetentionDays: number;
  /** Audit records (audit/): a chain then verifies from its oldest record kept. */
  auditRetentionDays: number;
}

/**
 * At least a week: a delivery is retried for about 28 hours and may wait up to 3 days for a paused
 * endpoint, and a run waits on its agent's pending list until the agent takes it; neither may expire
 * while it is still being worked on.
 */
export const retentionSettingLimits: Record<keyof RetentionSettings, WholeNumberLimits> = {
  runRetentionDays: { fallback: 90, min: 7, max: 3650 },
  deliveryRetentionDays: { fallback: 30, min: 7, max: 3650 },
  // At least a month, for an operator to look into last month's changes; 400 days covers a yearly review.
  auditRetentionDays: { fallback: 400, min: 30, max: 3650 },
};

/** The environment variable that carries each setting to the functions. */
export const retentionSettingVariables: Record<keyof RetentionSettings, string> = {
  runRetentionDays: 'RUN_RETENTION_DAYS',
  deliveryRetentionDays: 'DELIVERY_RETENTION_DAYS',
  auditRetentionDays: 'AUDIT_RETENTION_DAYS',
};

/** Read from the environment once per cold start; a bad value fails there. */
export const retentionSettings: () => RetentionSettings = settingsFromEnvironment(
  retentionSettingLimits,
  retentionSettingVariables,
);

/** The `expiresAt` (epoch seconds) of a record of that kind written at `nowMs`. */
export function expiresAt(setting: keyof RetentionSettings, nowMs = Date.now()): number {
  return Math.floor(nowMs / 1000) + retentionSettings()[setting] * 86_400;
}
