import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { cancelRollout } from '#functions/core/rollouts/rollouts.ts';

export const handler = httpHandler(async (request) => ({
  status: 200,
  body: {
    status: 'success',
    data: await cancelRollout(
      clientIdOf(request.principal),
      idParameter(request, 'id'),
      idParameter(request, 'rolloutId'),
      request.requestId,
    ),
  },
}));
