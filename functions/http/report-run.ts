import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import reportRunSchema from '#functions/core/api/validators/report-run.cjs';
import { agentOf } from '#functions/core/auth/principals.ts';
import { describeRun, reportRun } from '#functions/core/reload/runs.ts';

export const handler = httpHandler(
  async (request) => {
    const run = await reportRun(agentOf(request.principal), idParameter(request, 'id'), request.body, request.requestId);
    return { status: 200, body: { status: 'success', data: describeRun(run) } };
  },
  { body: reportRunSchema },
);
