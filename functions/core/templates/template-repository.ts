import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/dynamo.ts';
import { keys } from '../store/keys.ts';

/** Whether `templateId` is a template published by this client (templates are client-scoped). */
export async function templateExists(clientId: number, templateId: number): Promise<boolean> {
  const result = await db().send(
    new GetCommand({ TableName: tableName(), Key: keys.template(clientId, templateId), ProjectionExpression: 'pk' }),
  );
  return result.Item !== undefined;
}
