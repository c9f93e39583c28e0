import { httpHandler } from '../core/api/http-handler.ts';
import { tenantIdOf } from '../core/auth/principals.ts';
import { describeGroups } from '../core/directory/groups.ts';

export const handler = httpHandler(async ({ principal }) => ({
  status: 200,
  body: { status: 'success', data: await describeGroups(tenantIdOf(principal)) },
}));
