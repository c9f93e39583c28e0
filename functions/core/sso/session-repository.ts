import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, getItem, tableName } from '#functions/core/store/dynamo.ts';
import { keys } from '#functions/core/store/keys.ts';

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
  /** Epoch seconds, comparable with a user's `revokedBefore`. */
  createdAt: number;
  expiresAt: number;
}

/** Sessions are stored by the SHA-256 of their cookie value, never by the value itself. */
export async function insertSession(sessionHash: string, session: SessionRecord): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...session, ...keys.session(sessionHash) } }));
}

export async function findSession(sessionHash: string): Promise<SessionRecord | undefined> {
  return getItem<SessionRecord>(keys.session(sessionHash));
}
