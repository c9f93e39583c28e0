import type { AlertDeliveryBody } from '#functions/core/api/validators/alert-delivery.cjs';
import type { AlertWebhookBody, Block } from '#functions/core/api/validators/alert-webhook.cjs';
import type { CreateAlertBody } from '#functions/core/api/validators/create-alert.cjs';
import type { UpdateAlertBody } from '#functions/core/api/validators/update-alert.cjs';
import { badRequest, conflict, notFound } from '#functions/core/errors.ts';
import { type Resumable, unrecorded } from '#functions/core/store/resumable.ts';
import {
  type AlertRecord,
  allocateAlertId,
  deleteAlertRecord,
  findAlertRecord,
  insertAlert,
  listAlertsPage,
  updateAlertFields,
} from './alert-repository.ts';
import { mapPage } from '#functions/core/store/dynamo.ts';

/** A block of an alert's definition: `generated` is what is sent when a delivery brings no content. */
type BlockDefinition = CreateAlertBody['content'][number];

export const alertNotFound = () => notFound('Alert not found', 'alert_not_found');

/**
 * An alert is one DynamoDB item (at most 400 KB), and its content blocks are most of it: their JSON
 * may take this many bytes (UTF-8), leaving room for the rest of the item. A request body may be
 * larger (1 MiB), so this is checked before anything is written.
 */
export const maxAlertContentBytes = 300 * 1024;

/**
 * Alerts a tenant may have (bounded growth: a tenant creates nothing without a quota), kept by
 * `COUNT#ALERTS` in the tenant's partition, which the alert's creation and deletion change in their
 * own transactions (store/counts.ts); past it, POST /tenant/alerts is a 409 `alert_limit`.
 */
export const maxAlertsPerTenant = 1_000;

/** 409 when the tenant has as many alerts as it may. */
const alertLimit = (max: number) => conflict(`A tenant has at most ${max.toLocaleString('en')} alerts`, 'alert_limit');

/** 400 at `/content` when the blocks would not fit in the alert's item. */
function checkContentSize(content: BlockDefinition[] | undefined): void {
  if (content === undefined) return;
  const bytes = Buffer.byteLength(JSON.stringify(content));
  if (bytes <= maxAlertContentBytes) return;
  const message = `takes ${bytes} bytes as JSON; an alert's content may take at most ${maxAlertContentBytes}`;
  throw badRequest(
    `The alert's content is too large: it ${message}`,
    [{ location: 'body', pointer: '/content', message }],
    'validation_failed',
  );
}

export const describeAlert = ({ alertId, nome, channels, content, createdAt, updatedAt }: AlertRecord) => ({
  id: alertId,
  nome,
  channels,
  content,
  createdAt,
  updatedAt,
});

/** An alert as the API shows it. */
export type AlertView = ReturnType<typeof describeAlert>;

/**
 * POST /tenant/alerts: at most `max` alerts (`maxAlertsPerTenant`; tests pass smaller ones), the
 * tenant's alert count conditioned in the alert's own transaction.
 */
export async function createAlert(
  tenantId: number,
  input: CreateAlertBody,
  record: Resumable<AlertView> = unrecorded(),
  max = maxAlertsPerTenant,
): Promise<AlertView> {
  checkContentSize(input.content);
  const alertId = await allocateAlertId(tenantId);
  const now = new Date().toISOString();
  const alert: AlertRecord = { ...input, tenantId, alertId, createdAt: now, updatedAt: now };
  const view = describeAlert(alert);
  if (!(await insertAlert(alert, record.finish(view), max))) throw alertLimit(max);
  return view;
}

export async function findAlert(tenantId: number, alertId: number): Promise<AlertRecord> {
  const alert = await findAlertRecord(tenantId, alertId);
  if (!alert) throw alertNotFound();
  return alert;
}

export async function listAlerts(tenantId: number, limit: number, cursor: string | undefined) {
  const page = await listAlertsPage(tenantId, limit, cursor);
  return mapPage(page, describeAlert);
}

/** Replaces the fields given, in one conditional write; the alert must exist (404 otherwise, also for another tenant's). */
export async function updateAlert(tenantId: number, alertId: number, change: UpdateAlertBody) {
  checkContentSize(change.content);
  const updated = await updateAlertFields(tenantId, alertId, change, new Date().toISOString());
  if (!updated) throw alertNotFound();
  return describeAlert(updated);
}

/** Deletes the alert (off the tenant's alert count); its deliveries stay readable until they expire (30 days). */
export async function deleteAlert(tenantId: number, alertId: number): Promise<void> {
  const deleted = await deleteAlertRecord(tenantId, alertId);
  if (!deleted) throw alertNotFound();
}

/** A block as a delivery that brings no generated content sends it: its definition's content, else its type's default. */
function sentBlock(block: BlockDefinition): Block {
  const { nome } = block;
  switch (block.type) {
    case 'text':
    case 'ai':
      return { type: block.type, nome, generated: block.generated ?? { text: '' } };
    case 'report':
      return { type: block.type, nome, generated: block.generated ?? {} };
    case 'chart':
      return { type: block.type, nome, generated: block.generated ?? { kind: 'dashboard' } };
  }
}

/** The spec 6 body for one user: the generated content when given, else the alert's definitions. */
export function buildPayload(
  alert: AlertRecord,
  user: AlertDeliveryBody['user'],
  content: AlertDeliveryBody['content'],
  now = new Date(),
): AlertWebhookBody {
  return {
    alert: { nome: alert.nome, id: alert.alertId },
    user: { id: user.id, ...(user.email === undefined ? {} : { email: user.email }) },
    content: content ?? alert.content.map(sentBlock),
    timestamp: now.toISOString(),
  };
}
