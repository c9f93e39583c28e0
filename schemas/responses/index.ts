/**
 * The shapes of answers the API description names (a route row's `docs.answer`), by `$id`:
 * records inside the generic envelope, and the spec's own `{success: true, …}` answers.
 */
import agent from './agent.schema.json' with { type: 'json' };
import agentCreated from './agent-created.schema.json' with { type: 'json' };
import alert from './alert.schema.json' with { type: 'json' };
import alertPreview from './alert-preview.schema.json' with { type: 'json' };
import applyTemplateAnswer from './apply-template-answer.schema.json' with { type: 'json' };
import auditRecord from './audit-record.schema.json' with { type: 'json' };
import clientSettings from './client-settings.schema.json' with { type: 'json' };
import datamart from './datamart.schema.json' with { type: 'json' };
import defaultTemplate from './default-template.schema.json' with { type: 'json' };
import delivery from './delivery.schema.json' with { type: 'json' };
import deliveryQueued from './delivery-queued.schema.json' with { type: 'json' };
import done from './done.schema.json' with { type: 'json' };
import effectivePermission from './effective-permission.schema.json' with { type: 'json' };
import eventDelivery from './event-delivery.schema.json' with { type: 'json' };
import group from './group.schema.json' with { type: 'json' };
import groupPermission from './group-permission.schema.json' with { type: 'json' };
import health from './health.schema.json' with { type: 'json' };
import heartbeat from './heartbeat.schema.json' with { type: 'json' };
import jwkSet from './jwk-set.schema.json' with { type: 'json' };
import loginAnswer from './login-answer.schema.json' with { type: 'json' };
import membership from './membership.schema.json' with { type: 'json' };
import openapiDocument from './openapi-document.schema.json' with { type: 'json' };
import previousTokenEnded from './previous-token-ended.schema.json' with { type: 'json' };
import ownTenant from './own-tenant.schema.json' with { type: 'json' };
import reloadAnswer from './reload-answer.schema.json' with { type: 'json' };
import revokeLoginAnswer from './revoke-login-answer.schema.json' with { type: 'json' };
import rollout from './rollout.schema.json' with { type: 'json' };
import rolloutDryRun from './rollout-dry-run.schema.json' with { type: 'json' };
import rolloutStarted from './rollout-started.schema.json' with { type: 'json' };
import rolloutTenant from './rollout-tenant.schema.json' with { type: 'json' };
import run from './run.schema.json' with { type: 'json' };
import runRetry from './run-retry.schema.json' with { type: 'json' };
import schedulePreview from './schedule-preview.schema.json' with { type: 'json' };
import scheduleRun from './schedule-run.schema.json' with { type: 'json' };
import scheduleSummary from './schedule-summary.schema.json' with { type: 'json' };
import session from './session.schema.json' with { type: 'json' };
import settings from './settings.schema.json' with { type: 'json' };
import templateDetail from './template-detail.schema.json' with { type: 'json' };
import templatePublished from './template-published.schema.json' with { type: 'json' };
import templateSummary from './template-summary.schema.json' with { type: 'json' };
import templateTenant from './template-tenant.schema.json' with { type: 'json' };
import tenantCreated from './tenant-created.schema.json' with { type: 'json' };
import tenantDetail from './tenant-detail.schema.json' with { type: 'json' };
import tenantSummary from './tenant-summary.schema.json' with { type: 'json' };
import tokenRotated from './token-rotated.schema.json' with { type: 'json' };
import user from './user.schema.json' with { type: 'json' };
import userPermission from './user-permission.schema.json' with { type: 'json' };
import userWithAccess from './user-with-access.schema.json' with { type: 'json' };
import whoami from './whoami.schema.json' with { type: 'json' };

export const responseSchemas = {
  agent,
  'agent-created': agentCreated,
  alert,
  'alert-preview': alertPreview,
  'apply-template-answer': applyTemplateAnswer,
  'client-settings': clientSettings,
  datamart,
  'default-template': defaultTemplate,
  delivery,
  'delivery-queued': deliveryQueued,
  done,
  'effective-permission': effectivePermission,
  'event-delivery': eventDelivery,
  group,
  'group-permission': groupPermission,
  health,
  heartbeat,
  'jwk-set': jwkSet,
  'login-answer': loginAnswer,
  membership,
  'openapi-document': openapiDocument,
  'previous-token-ended': previousTokenEnded,
  'own-tenant': ownTenant,
  'reload-answer': reloadAnswer,
  'revoke-login-answer': revokeLoginAnswer,
  rollout,
  'rollout-dry-run': rolloutDryRun,
  'rollout-started': rolloutStarted,
  'rollout-tenant': rolloutTenant,
  run,
  'run-retry': runRetry,
  'audit-record': auditRecord,
  'schedule-preview': schedulePreview,
  'schedule-run': scheduleRun,
  'schedule-summary': scheduleSummary,
  session,
  settings,
  'template-detail': templateDetail,
  'template-published': templatePublished,
  'template-summary': templateSummary,
  'template-tenant': templateTenant,
  'tenant-created': tenantCreated,
  'tenant-detail': tenantDetail,
  'tenant-summary': tenantSummary,
  'token-rotated': tokenRotated,
  user,
  'user-permission': userPermission,
  'user-with-access': userWithAccess,
  whoami,
} as const;

export type ResponseSchemaName = keyof typeof responseSchemas;
