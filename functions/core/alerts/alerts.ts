import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { notFound } from '../errors.ts';
import { allocateIds, db, type Page, queryPage, tableName } from '../store/dynamo.ts';
import { keys } from '../store/keys.ts';

export type BlockType = 'text' | 'ai' | 'report' | 'chart';

/** A spec 6 content block, as sent. */
export interface ContentBlock {
  type: BlockType;
  nome: string;
  generated: Record<string, unknown>;
}

/** A block of an alert's definition: `generated` is what is sent when a delivery brings no content. */
export interface BlockDefinition {
  type: BlockType;
  nome: string;
  generated?: Record<string, unknown>;
}

export interface AlertInput {
  nome: string;
  channels: { webhook: boolean };
  content: BlockDefinition[];
}

export interface AlertRecord extends AlertInput {
  tenantId: number;
  alertId: number;
  createdAt: string;
  updatedAt: string;
}

/** Spec 6 payload (schemas/alert-webhook.schema.json). */
export interface AlertPayload {
  alert: { nome: string; id: number };
  user: { id: number | string; email?: string };
  content: ContentBlock[];
  timestamp: string;
}

export const alertNotFound = () => notFound('Alert not found');

export const describeAlert = ({ alertId, nome, channels, content, createdAt, updatedAt }: AlertRecord) => ({
  id: alertId,
  nome,
  channels,
  content,
  createdAt,
  updatedAt,
});

export async function createAlert(tenantId: number, input: AlertInput) {
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

/** Replaces the fields given; the alert must exist (404 otherwise, also for another tenant's). */
export async function updateAlert(tenantId: number, alertId: number, change: Partial<AlertInput>) {
  const current = await findAlert(tenantId, alertId);
  const record: AlertRecord = { ...current, ...change, updatedAt: new Date().toISOString() };
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...keys.alert(tenantId, alertId), ...record },
        ConditionExpression: 'updatedAt = :seen',
        ExpressionAttributeValues: { ':seen': current.updatedAt },
      }),
    );
  } catch (error) {
    // Deleted or changed in between: the caller re-reads (a deleted alert is then 404).
    if (error instanceof ConditionalCheckFailedException) return updateAlert(tenantId, alertId, change);
    throw error;
  }
  return describeAlert(record);
}

/** Deletes the alert; its deliveries stay readable until they expire (30 days). */
export async function deleteAlert(tenantId: number, alertId: number): Promise<void> {
  try {
    await db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: keys.alert(tenantId, alertId),
        ConditionExpression: 'attribute_exists(pk)',
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) throw alertNotFound();
    throw error;
  }
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
  user: AlertPayload['user'],
  content: ContentBlock[] | undefined,
  now = new Date(),
): AlertPayload {
  return {
    alert: { nome: alert.nome, id: alert.alertId },
    user: { id: user.id, ...(user.email === undefined ? {} : { email: user.email }) },
    content:
      content ?? alert.content.map((block) => ({ type: block.type, nome: block.nome, generated: defaultGenerated(block) })),
    timestamp: now.toISOString(),
  };
}
