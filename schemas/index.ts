/**
 * Every request-body schema, by the name the route table uses, and the schemas they refer to
 * (`alert-webhook` and `client-event`, the payloads sent to receivers; `text`, the rules of names, logins and labels).
 */
import alertDelivery from './alert-delivery.schema.json' with { type: 'json' };
import alertWebhook from './alert-webhook.schema.json' with { type: 'json' };
import applyTemplate from './apply-template.schema.json' with { type: 'json' };
import clientEvent from './client-event.schema.json' with { type: 'json' };
import createAgent from './create-agent.schema.json' with { type: 'json' };
import createAlert from './create-alert.schema.json' with { type: 'json' };
import createDatamart from './create-datamart.schema.json' with { type: 'json' };
import createGroup from './create-group.schema.json' with { type: 'json' };
import createRollout from './create-rollout.schema.json' with { type: 'json' };
import createTenant from './create-tenant.schema.json' with { type: 'json' };
import createUser from './create-user.schema.json' with { type: 'json' };
import deleteTenant from './delete-tenant.schema.json' with { type: 'json' };
import login from './login.schema.json' with { type: 'json' };
import reload from './reload.schema.json' with { type: 'json' };
import reportRun from './report-run.schema.json' with { type: 'json' };
import revokeLogin from './revoke-login.schema.json' with { type: 'json' };
import rotateToken from './rotate-token.schema.json' with { type: 'json' };
import scheduleV2 from './schedule.v2.schema.json' with { type: 'json' };
import setPermissions from './set-permissions.schema.json' with { type: 'json' };
import setDefaultTemplate from './set-default-template.schema.json' with { type: 'json' };
import templateBundle from './template-bundle.schema.json' with { type: 'json' };
import text from './text.schema.json' with { type: 'json' };
import updateAlert from './update-alert.schema.json' with { type: 'json' };
import updateDatamart from './update-datamart.schema.json' with { type: 'json' };
import updateClientSettings from './update-client-settings.schema.json' with { type: 'json' };
import updateSettings from './update-settings.schema.json' with { type: 'json' };
import updateTenant from './update-tenant.schema.json' with { type: 'json' };
import updateUser from './update-user.schema.json' with { type: 'json' };

export const requestSchemas = {
  'alert-delivery': alertDelivery,
  'alert-webhook': alertWebhook,
  'apply-template': applyTemplate,
  'client-event': clientEvent,
  'create-agent': createAgent,
  'create-alert': createAlert,
  'create-datamart': createDatamart,
  'create-group': createGroup,
  'create-rollout': createRollout,
  'create-tenant': createTenant,
  'create-user': createUser,
  'delete-tenant': deleteTenant,
  login,
  reload,
  'report-run': reportRun,
  'revoke-login': revokeLogin,
  'rotate-token': rotateToken,
  'schedule.v2': scheduleV2,
  'set-default-template': setDefaultTemplate,
  'set-permissions': setPermissions,
  'template-bundle': templateBundle,
  text,
  'update-alert': updateAlert,
  'update-datamart': updateDatamart,
  'update-client-settings': updateClientSettings,
  'update-settings': updateSettings,
  'update-tenant': updateTenant,
  'update-user': updateUser,
} as const;

export type RequestSchemaName = keyof typeof requestSchemas;
