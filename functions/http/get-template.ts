import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { describeTemplate } from '#functions/core/templates/catalogue.ts';

export const handler = httpHandler(async (request) => ({
  status: 200,
  body: { status: 'success', data: await describeTemplate(clientIdOf(request.principal), idParameter(request, 'id')) },
}));
