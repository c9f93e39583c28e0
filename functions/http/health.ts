import { httpHandler } from '#functions/core/api/http-handler.ts';

export const handler = httpHandler(async () => ({ status: 200, body: { status: 'success', data: { status: 'ok' } } }));
