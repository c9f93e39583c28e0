import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AlertDeliveryBody } from '../api/validators/alert-delivery.cjs';
import type { AlertWebhookBody, Block } from '../api/validators/alert-webhook.cjs';
import type { CreateAlertBody } from '../api/validators/create-alert.cjs';
import type { UpdateAlertBody } from '../api/validators/update-alert.cjs';
import { badRequest, notFound } from '../errors.ts';
import { allocateIds, db, type Page, queryPage, tableName, writeIf } from '../store/dynamo.ts';
import { keys } from '../store/keys.ts';

/** A block of an alert's definition: `generated` is what is sent when a delivery brings no content. */
type BlockDefinition = CreateAlertBody['content'][number];

export interface AlertRecord extends CreateAlertBody {
  tenantId: number;
  alertId: number;
  createdAt: string;
  updatedAt: string;
}

export const alertNotFound = () => notFound('Alert not found');

/**
 * An alert is one DynamoDB item (at most 400 KB), and its content blocks are most of it: their JSON
 * may take this many bytes (UTF-8), leaving room for the rest of the item. A request body may be
 * larger (1 MiB), so this is checked before anything is written.
 */
export const maxAlertContentBytes = 300 * 1024;

/** 400 at `/content` when the blocks would not fit in the alert's item. */
function checkContentSize(content: BlockDefinition[] | undefined): void {
  if (content === undefined) return;
  const bytes = Buffer.byteLength(JSON.stringify(content));
  if (bytes <= maxAlertContentBytes) return;
  const message = `takes ${bytes} bytes as JSON; an alert's content may take at most ${maxAlertContentBytes}`;
  throw badRequest(`The alert's content is too large: it ${message}`, [{ location: 'body', pointer: '/content', message }]);
}

export const describeAlert = ({ alertId, nome, channels, content, createdAt, updatedAt }: AlertRecord) => ({
  id: alertId,
  nome,
  channels,
  content,
  createdAt,
  updatedAt,
});

export async function createAlert(tenantId: number, input: CreateAlertBody) {
  checkContentSize(input.content);
  const [alertId] = (await allocateIds(keys.tenantCounter(tenantId, 'alert'), 1)) as [number];
  const now = new Date().toISOString();
  const record: AlertRecord = { ...input, tenantId, alertId, createdAt: now, updatedAt: now };
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...keys.alert(tenantId, alertId), ...record } }));
  return describeAlert(record);
}

export async function findAlert(tenantId: number, alertId: number): Promise<AlertRecord> {
  const result = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.alert(tenantId, alertId), ConsistentRead: true }),
  );
  if (!result.Item) throw alertNotFound();
  return result.Item as AlertRecord;
}

export async function listAlerts(tenantId: number, limit: number, cursor: string | undefined) {
  const page: Page<AlertRecord> = await queryPage({
    partition: keys.tenant(tenantId).pk,
    prefix: keys.alertsPrefix,
    limit,
    cursor,
  });
  return { items: page.items.map(describeAlert), nextCursor: page.nextCursor };
}

/** Replaces the fields given, in one conditional write; the alert must exist (404 otherwise, also for another tenant's). */
export async function updateAlert(tenantId: number, alertId: number, change: UpdateAlertBody) {
  checkContentSize(change.content);
  const fields = (['nome', 'channels', 'content'] as const).filter((field) => change[field] !== undefined);
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':updatedAt': new Date().toISOString() };
  for (const field of fields) {
    names[`#${field}`] = field;
    values[`:${field}`] = change[field];
  }
  let updated: AlertRecord | undefined;
  const written = await writeIf(async () => {
    const result = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.alert(tenantId, alertId),
        UpdateExpression: `SET ${[...fields.map((field) => `#${field} = :${field}`), 'updatedAt = :updatedAt'].join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ...(fields.length > 0 ? { ExpressionAttributeNames: names } : {}),
        ExpressionAttributeValues: values,
        ReturnValues: 'ALL_NEW',
      }),
    );
    updated = result.Attributes as AlertRecord;
  });
  if (!written || !updated) throw alertNotFound();
  return describeAlert(updated);
}

/** Deletes the alert; its deliveries stay readable until they expire (30 days). */
export async function deleteAlert(tenantId: number, alertId: number): Promise<void> {
  const deleted = await writeIf(() =>
    db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.alert(tenantId, alertId),
        ConditionExpression: 'attribute_exists(pk)',
      }),
    ),
  );
  if (!deleted) throw alertNotFound();
}

/** What a block sends when the delivery brings no generated content for it. */
function defaultGenerated(block: BlockDefinition): Record<string, unknown> {
  if (block.generated) return block.generated;
  if (block.type === 'text' || block.type === 'ai') return { text: '' };
  if (block.type === 'chart') return { kind: 'dashboard' };
  return {};
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
    content:
      content ??
      // A block: its definition's generated content was checked against its type when the alert was
      // written (schemas/create-alert.schema.json), and each default suits the types it serves.
      alert.content.map((block) => ({ type: block.type, nome: block.nome, generated: defaultGenerated(block) }) as Block),
    timestamp: now.toISOString(),
  };
}
