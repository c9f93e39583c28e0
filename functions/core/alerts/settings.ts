import { createHmac, randomBytes } from 'node:crypto';
import type { UpdateSettingsBody } from '#functions/core/api/validators/update-settings.cjs';
import { badRequest, conflict } from '#functions/core/errors.ts';
import { ownerFields, type WebhookOwner } from '#functions/core/webhooks/owner.ts';
import { webhookUrlProblem } from '#functions/core/webhooks/safe-sender.ts';
import {
  findSettings,
  replaceSettings,
  type SettingsRecord,
  type SigningSecret,
  type WebhookChannel,
} from './alert-repository.ts';
import { describeEndpoint, maxInFlightOf } from './endpoint.ts';
import { type EndpointState, findEndpointState } from './endpoint-repository.ts';
import { webhookConfig } from './webhook-config.ts';

/** How long a rotated-out secret keeps signing, so receivers can switch without losing a delivery. */
export const secretOverlapMs = 24 * 3600 * 1000;

/** `whsec_` + base64 of 32 random bytes, the Standard Webhooks secret format. */
const newSigningSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * What the API shows of a webhook channel: never a secret, except `signingSecret` in the answer that
 * created it; the webhook's endpoint as the deliverer sees it (attempts in flight, paused or not:
 * endpoint.ts). A tenant's settings show it under `alertChannels`, a client's as they are.
 */
export function describeSettings(record: SettingsRecord, endpoint: EndpointState, newSecret?: string) {
  const webhook = record.webhook;
  return {
    webhook: webhook
      ? {
          url: webhook.url,
          enabled: webhook.enabled,
          ...(webhook.disabledAt ? { disabledAt: webhook.disabledAt, disabledReason: webhook.disabledReason } : {}),
          maxInFlight: maxInFlightOf(webhook),
          endpoint: describeEndpoint(endpoint, webhook),
          secretCreatedAt: webhook.secrets[0]?.createdAt,
          ...(newSecret ? { signingSecret: newSecret } : {}),
        }
      : null,
  };
}

/** GET /tenant/settings, GET /tenants/settings: the settings and the endpoint, read together. */
export async function getSettings(owner: WebhookOwner) {
  const [record, endpoint] = await Promise.all([findSettings(owner), findEndpointState(owner)]);
  return describeSettings(record, endpoint);
}

/** Re-reads and retries when the record changed in between (a rotation, a 410 disabling the channel). */
async function updateSettings(
  owner: WebhookOwner,
  change: (current: SettingsRecord, now: string) => { record: SettingsRecord; newSecret?: string },
) {
  for (let attempt = 0; attempt < 3; attempt++) {
    const [current, endpoint] = await Promise.all([findSettings(owner), findEndpointState(owner)]);
    const { record, newSecret } = change(current, new Date().toISOString());
    if (await replaceSettings(owner, record, current)) return describeSettings(record, endpoint, newSecret);
  }
  throw conflict('The settings changed while this request ran; retry it', 'concurrent_change');
}

/** What a PATCH asks of the webhook channel (a tenant's `alertChannels.webhook`, a client's `webhook`: one schema). */
export type WebhookPatch = UpdateSettingsBody['alertChannels']['webhook'];

/** Where each owner's PATCH body holds the webhook, for the pointers of its errors. */
const webhookPointer: Record<WebhookOwner['kind'], string> = { tenant: '/alertChannels/webhook', client: '/webhook' };

/**
 * PATCH /tenant/settings, PATCH /tenants/settings. Setting a webhook URL for the first time
 * creates its signing secret (shown once, in this answer); `null` removes the webhook and its
 * secrets; `enabled: true` re-enables a channel a receiver disabled with 410 (or that days without
 * an answer disabled); `maxInFlight` sets how many attempts the endpoint takes at once (the schema
 * bounds it).
 */
export function patchSettings(owner: WebhookOwner, requested: WebhookPatch) {
  const urlPointer = `${webhookPointer[owner.kind]}/url`;
  if (requested?.url !== undefined) {
    const problem = webhookUrlProblem(requested.url, { allowLoopback: webhookConfig().allowLoopback });
    if (problem) {
      throw badRequest(
        `Invalid webhook URL: ${problem}`,
        [{ location: 'body', pointer: urlPointer, message: problem }],
        'validation_failed',
      );
    }
  }
  return updateSettings(owner, (current, now) => {
    if (requested === null) return { record: { ...ownerFields(owner), updatedAt: now } };
    const existing = current.webhook;
    if (!existing) {
      if (requested.url === undefined) {
        throw badRequest(
          'A webhook needs a url',
          [{ location: 'body', pointer: urlPointer, message: 'is required' }],
          'validation_failed',
        );
      }
      const secret = newSigningSecret();
      const webhook = {
        url: requested.url,
        enabled: requested.enabled ?? true,
        ...(requested.maxInFlight === undefined ? {} : { maxInFlight: requested.maxInFlight }),
        secrets: [{ secret, createdAt: now }],
      };
      return { record: { ...ownerFields(owner), webhook, updatedAt: now }, newSecret: secret };
    }
    const enabled = requested.enabled ?? existing.enabled;
    const { disabledAt, disabledReason, ...rest } = existing;
    const webhook: WebhookChannel = {
      ...rest,
      url: requested.url ?? existing.url,
      enabled,
      ...(requested.maxInFlight === undefined ? {} : { maxInFlight: requested.maxInFlight }),
      // Re-enabling clears why it was disabled; an unchanged state keeps it.
      ...(enabled || disabledAt === undefined ? {} : { disabledAt, disabledReason }),
    };
    return { record: { ...current, webhook, updatedAt: now } };
  });
}

/**
 * POST /tenant/settings/webhook/secret (and /tenants/settings/webhook/secret): a new secret (shown
 * once); the one it replaces signs too for 24 hours. Only that one: older secrets stop signing at
 * once, so a header carries at most two signatures however often the secret is rotated.
 */
export function rotateSigningSecret(owner: WebhookOwner) {
  return updateSettings(owner, (current, now) => {
    if (!current.webhook) throw conflict('No webhook is configured', 'no_webhook');
    const secret = newSigningSecret();
    const replaced = current.webhook.secrets[0];
    const retiresAt = new Date(Date.parse(now) + secretOverlapMs).toISOString();
    const previous = replaced ? [{ secret: replaced.secret, createdAt: replaced.createdAt, retiresAt }] : [];
    const webhook = { ...current.webhook, secrets: [{ secret, createdAt: now }, ...previous] };
    return { record: { ...current, webhook, updatedAt: now }, newSecret: secret };
  });
}

/**
 * Why the owner's webhook channel cannot deliver now (no URL, or disabled), or undefined when it
 * can. The one check behind fire/send, an event's queueing, redeliver and each attempt of the deliverer.
 */
export function channelProblem(settings: SettingsRecord): string | undefined {
  const webhook = settings.webhook;
  const owner = settings.clientId === undefined ? 'tenant' : 'client';
  if (!webhook) return `No webhook URL is configured for the ${owner}`;
  if (webhook.enabled) return undefined;
  return `The ${owner}'s webhook channel is disabled${webhook.disabledReason ? ` (${webhook.disabledReason})` : ''}`;
}

/**
 * Standard Webhooks `webhook-signature`: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` per
 * secret still signing (two during a rotation, never more), space-separated.
 */
export function signatureHeader(
  secrets: readonly SigningSecret[],
  webhookId: string,
  timestamp: number,
  body: string,
  now = Date.now(),
): string {
  return (
    secrets
      .filter((secret) => !secret.retiresAt || Date.parse(secret.retiresAt) > now)
      // The newest and the one it replaced (records rotated before this rule may hold more).
      .slice(0, 2)
      .map((secret) => {
        const key = Buffer.from(secret.secret.slice('whsec_'.length), 'base64');
        return `v1,${createHmac('sha256', key).update(`${webhookId}.${timestamp}.${body}`).digest('base64')}`;
      })
      .join(' ')
  );
}
