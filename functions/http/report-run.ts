import { httpHandler, idParameter } from '../core/api/http-handler.ts';
import reportRunSchema from '../core/api/validators/report-run.cjs';
import { agentOf } from '../core/auth/principals.ts';
import { describeRun, reportRun } from '../core/reload/runs.ts';

export const handler = httpHandler(
  async (request) => {
    const { tenantId, agentId } = agentOf(request.principal);
    const run = await reportRun(tenantId, agentId, idParameter(request, 'id'), request.body);
    return { status: 200, body: { status: 'success', data: describeRun(run) } };
  },
  { body: reportRunSchema },
);
