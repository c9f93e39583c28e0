import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll } from 'vitest';
import { authenticate } from '#functions/core/auth/principals.ts';
import { db } from '#functions/core/store/dynamo.ts';

/**
 * For a test file that counts what authenticating an agent token costs: registers (for the file) a
 * middleware on the store's client that notes each DynamoDB command by name, per call (calls at once
 * count apart), and returns `authenticated`: what authenticating `token` on an agent route answers
 * (its principal, or its status) and the commands it sent.
 */
export function countedAgentAuthentication(middlewareName: string) {
  const counting = new AsyncLocalStorage<string[]>();
  beforeAll(() => {
    db().middlewareStack.add(
      (next, context) => (args) => {
        counting.getStore()?.push(context.commandName ?? 'unknown');
        return next(args);
      },
      { step: 'initialize', name: middlewareName },
    );
  });
  afterAll(() => {
    db().middlewareStack.remove(middlewareName);
  });
  return async function authenticated(token: string) {
    const commands: string[] = [];
    const answer = await counting.run(commands, () =>
      authenticate(`Bearer ${token}`, ['agent']).catch((error: { status?: number }) => ({ status: error.status })),
    );
    return { answer, commands };
  };
}
