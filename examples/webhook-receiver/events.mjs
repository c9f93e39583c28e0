// @ts-check
// The integrator's events (docs/events.md), as this receiver handles them: each type narrowed by `type`, its
// `data` typed from the service's API description (the typed client's `ClientEvent`), so a field this code
// misreads does not type-check (test/unit/webhook-receiver-types.test.ts checks it).

/** @typedef {import('../../client/src/index.ts').ClientEvent} ClientEvent */
/** @typedef {import('../../client/src/index.ts').components['schemas']['client-event.counts']} Counts */

/**
 * Whether a verified body is an event (`{type, timestamp, data}`), not an alert (`{alert, user, content}`).
 * @param {unknown} payload
 * @returns {payload is ClientEvent}
 */
export function isEvent(payload) {
  const body = /** @type {{ type?: unknown, data?: unknown } | null} */ (payload);
  return typeof body?.type === 'string' && typeof body.data === 'object' && body.data !== null;
}

/** @param {Counts} counts */
const outcomes = (counts) =>
  `${counts.applied} applied, ${counts.unchanged} unchanged, ${counts.pending_activation} waiting for activation, ` +
  `${counts.failed} failed, ${counts.pending} to go`;

/**
 * What to do with an event: here, a line for the log (a real receiver would page someone for a failed run, or
 * resume a paused rollout once it has looked). A type this receiver does not know is acknowledged and ignored:
 * new ones may come.
 * @param {ClientEvent} event
 * @returns {string}
 */
export function handleEvent(event) {
  switch (event.type) {
    case 'rollout.wave_finished': {
      const { templateId, rolloutId, wave, waves, counts } = event.data;
      return `rollout ${rolloutId} of template ${templateId}: wave ${wave} of ${waves} done (${outcomes(counts)})`;
    }
    case 'rollout.finished': {
      const { templateId, rolloutId, version, state, counts } = event.data;
      return `rollout ${rolloutId} of template ${templateId} v${version} ${state} (${outcomes(counts)})`;
    }
    case 'rollout.paused': {
      const { templateId, rolloutId, reason, counts } = event.data;
      return `rollout ${rolloutId} of template ${templateId} paused (${reason}): ${outcomes(counts)}`;
    }
    case 'tenant.apply_failed': {
      const { tenantId, templateId, version, rolloutId, error } = event.data;
      const where = rolloutId === null ? '' : ` in rollout ${rolloutId}`;
      return `tenant ${tenantId}: applying template ${templateId} v${version}${where} failed: ${error.code} ${error.message}`;
    }
    case 'run.failed': {
      const { tenantId, runId, flowId, agentId, message } = event.data;
      return `tenant ${tenantId}: run ${runId} (flow ${flowId}, agent ${agentId}) failed: ${message ?? 'no message'}`;
    }
    case 'schedule.missed': {
      const { tenantId, scheduleId, reason, slot, firedSlot } = event.data;
      const instead = firedSlot === null ? '' : `; ${firedSlot} fired instead`;
      return `tenant ${tenantId}: schedule ${scheduleId} missed its slot ${slot} (${reason})${instead}`;
    }
    case 'webhook.endpoint_disabled': {
      const { tenantId, reason, message } = event.data;
      return `tenant ${tenantId}: its alert webhook was disabled (${reason}): ${message}`;
    }
    default: {
      const unknown = /** @type {{ type: string }} */ (event);
      return `an event of a type this receiver does not know (${unknown.type}): ignored`;
    }
  }
}
