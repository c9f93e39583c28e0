import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, getItem, tableName, writeItem } from '#functions/core/store/dynamo.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';

/** The UI flags of spec 4.6, carried from the login URL into the session. */
export interface UiFlags {
  showMenu?: '0' | '1';
  showDesksIcon?: '0' | '1';
}

export interface SessionRecord extends UiFlags {
  tenantId: number;
  userId: number;
  /** The user's login when the session opened: a session ends when it changes. */
  login: string;
  /** Epoch seconds (what versions before `createdAtMs` read). */
  createdAt: number;
  /** Epoch milliseconds, compared with the revocations (revocation.ts); absent on sessions opened before it. */
  createdAtMs?: number;
  expiresAt: number;
}

/** Sessions are stored by the SHA-256 of their cookie value, never by the value itself. */
export async function insertSession(sessionHash: string, session: SessionRecord): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...session, ...stored.session.key({ sessionHash }) } }));
}

export async function findSession(sessionHash: string): Promise<SessionRecord | undefined> {
  return getItem<SessionRecord>(stored.session.key({ sessionHash }));
}

/**
 * Stamps the user as revoked at `revokedAtMs` (epoch ms), and `revokedBefore` (the next epoch second)
 * for the previous version during a deploy (revocation.ts); `false` when the user is gone.
 */
export function stampRevocation(tenantId: number, userId: number, revokedAtMs: number): Promise<boolean> {
  return writeItem({
    Update: {
      TableName: tableName(),
      Key: stored.user.key({ tenantId, userId }),
      UpdateExpression: 'SET revokedAtMs = :revokedAtMs, revokedBefore = :revokedBefore',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':revokedAtMs': revokedAtMs, ':revokedBefore': Math.floor(revokedAtMs / 1000) + 1 },
    },
  });
}
