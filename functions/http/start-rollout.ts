import { httpHandler, idParameter } from '#functions/core/api/http-handler.ts';
import createRolloutSchema from '#functions/core/api/validators/create-rollout.cjs';
import { clientIdOf } from '#functions/core/auth/principals.ts';
import { type RolloutView, startRollout } from '#functions/core/rollouts/rollouts.ts';

const accepted = (rollout: RolloutView) => ({ status: 202, body: { status: 'success', data: rollout } });

/** A dry run answers 200 with what would happen; a rollout, 202 once it is started (its work runs on the rollout queue). */
export const handler = httpHandler(
  async (request) => {
    const started = await startRollout(
      clientIdOf(request.principal),
      idParameter(request, 'id'),
      request.body,
      request.deadline,
      request.idempotency.resumable(accepted),
    );
    return 'dryRun' in started ? { status: 200, body: { status: 'success', data: started.dryRun } } : accepted(started.rollout);
  },
  { body: createRolloutSchema },
);
