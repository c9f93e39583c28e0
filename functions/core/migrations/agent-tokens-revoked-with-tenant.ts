/**
 * Migration 9: agent tokens that say their tenant is live. Earlier releases read an agent's tenant
 * on every request with its token (a second read, up to 16 read units with large variables); this
 * one reads the token item alone when it is marked `revokedWithTenant` (auth/token-repository.ts),
 * as every agent token made since is. Each agent token without the mark gets it if its agent names
 * it and its tenant is live and unclaimed (agent-repository.ts `markEarlierAgentToken`); one that
 * does not qualify keeps being checked against its tenant.
 */
import { markEarlierAgentToken } from '#functions/core/agents/agent-repository.ts';
import * as stored from '#functions/core/store/entity-declarations.ts';
import type { Migration } from '#functions/core/store/migrations.ts';

export const agentTokensRevokedWithTenant: Migration = {
  version: 9,
  name: 'agent-tokens-revoked-with-tenant',
  selects: [
    {
      entity: stored.token,
      where: {
        expression: '#kind = :agentKind AND attribute_not_exists(revokedWithTenant)',
        names: { '#kind': 'kind' },
        values: { ':agentKind': 'agent' },
      },
    },
  ],
  async migrate(item) {
    await markEarlierAgentToken(item as { pk: string; tenantId: number; agentId: number });
  },
};
