/**
 * The edge probe, every minute (an EventBridge rule of the edge stack, in us-east-1): calls the API at
 * EDGE_PROBE_URL through CloudFront as a caller would (functions/core/edge/edge-probe.ts) and publishes
 * `EdgeProbeSuccess`, 1 or 0, whose alarm also fires when the probe falls silent.
 */
import { probeEdge } from '#functions/core/edge/edge-probe.ts';
import { logger } from '#functions/core/observability/logger.ts';
import { outcome, publishMetrics } from '#functions/core/observability/metrics.ts';

const apiUrl = process.env.EDGE_PROBE_URL;

export async function handler(): Promise<void> {
  if (!apiUrl) throw new Error('Missing EDGE_PROBE_URL');
  const checks = await probeEdge(apiUrl);
  const failed = checks.filter((check) => !check.ok);
  outcome('EdgeProbeSuccess', failed.length === 0);
  publishMetrics();
  if (failed.length > 0) logger.error('Edge probe failed', { apiUrl, failed });
  else logger.info('Edge probe passed', { apiUrl, checks: checks.map((check) => check.name) });
}
