/**
 * Every `code` an error answer can carry, with its status and what it tells a program. The error
 * helpers (errors.ts) take only these codes, and only with their own status, so `tsc` refuses a code
 * that is not here. The OpenAPI document lists, per route, the codes its handler can reach
 * (tools/openapi/error-codes.ts) with the meanings below; the contract check then fails on any answer
 * whose code its route does not list.
 *
 * Imported as types only by the functions: the table itself stays out of their bundles, which is
 * what lets the document find a route's codes by the ones its bundle spells.
 */
export const errorCodes = {
  malformed_body: { status: 400, meaning: 'The body is not valid UTF-8, or nests or repeats keys beyond the limits.' },
  malformed_json: { status: 400, meaning: 'The body is not valid JSON.' },
  malformed_yaml: { status: 400, meaning: 'The body is not valid YAML.' },
  validation_failed: {
    status: 400,
    meaning: 'The body breaks its schema or a rule of the route: `errors` lists every failing field.',
  },
  invalid_path_parameter: { status: 400, meaning: 'An id in the path is not a positive integer.' },
  invalid_query_parameter: { status: 400, meaning: 'A query parameter (`limit`, `cursor`, …) has a value the route refuses.' },
  unknown_query_parameter: { status: 400, meaning: 'A query parameter the route does not take.' },
  invalid_idempotency_key: { status: 400, meaning: 'The `Idempotency-Key` header is not 1 to 255 printable ASCII characters.' },
  answer_too_large: {
    status: 400,
    meaning:
      'The answer would not fit in one (6 MB): page the list with the `limit` the message names. One item that large alone holds more than the quotas allow (data written before them).',
  },
  datamart_too_large: {
    status: 400,
    meaning: 'The datamart, with the columns of its tables and its owners, would not fit in one answer (4 MB): fewer tables.',
  },
  invalid_references: { status: 400, meaning: "The datamart names tables or owners that are not the tenant's." },
  invalid_permissions: { status: 400, meaning: "The permissions name users, groups or tables that are not the tenant's." },
  invalid_reload_items: {
    status: 400,
    meaning: "A reload item names a flow or agent that is not the tenant's; nothing was queued.",
  },
  invalid_template: { status: 400, meaning: 'The template bundle refers to resources it does not define.' },
  unauthorized: { status: 401, meaning: 'No credentials, or credentials that are not (or no longer) valid.' },
  wrong_token_kind: {
    status: 403,
    meaning: 'A valid token of another kind than the route takes; the message names the one it needs.',
  },
  route_not_found: { status: 404, meaning: 'No route has this path.' },
  tenant_not_found: {
    status: 404,
    meaning: "The tenant does not exist, is another client's, or was deleted (also for a deleted tenant's own token).",
  },
  template_not_found: { status: 404, meaning: "The template does not exist or is another client's." },
  template_version_not_found: { status: 404, meaning: 'The template has no such version.' },
  rollout_not_found: { status: 404, meaning: "The rollout does not exist, is another template's, or has expired." },
  login_not_found: { status: 404, meaning: 'No user of the tenant has this login (`Usuário não encontrado`).' },
  user_not_found: { status: 404, meaning: 'The tenant has no user with this id.' },
  group_not_found: { status: 404, meaning: 'The tenant has no group with this id.' },
  member_not_found: { status: 404, meaning: 'The user or the group of the membership is not (or no longer) there.' },
  agent_not_found: { status: 404, meaning: 'The tenant has no agent with this id.' },
  run_not_found: { status: 404, meaning: 'The tenant (or, for an agent, the agent) has no run with this id, or it has expired.' },
  datamart_not_found: { status: 404, meaning: 'The tenant has no datamart with this id.' },
  schedule_not_found: { status: 404, meaning: 'The tenant has no schedule with this id.' },
  alert_not_found: { status: 404, meaning: 'The tenant has no alert with this id.' },
  delivery_not_found: { status: 404, meaning: 'The tenant has no delivery with this id.' },
  file_not_found: { status: 404, meaning: 'The documentation page has no file of this name.' },
  method_not_allowed: { status: 405, meaning: 'The path takes other methods: `Allow` names them.' },
  tenant_inactive: { status: 409, meaning: 'The tenant is inactive.' },
  tenant_provisioning: { status: 409, meaning: "The tenant's first template is still being applied; retry shortly." },
  apply_in_progress: { status: 409, meaning: 'A template is being applied to the tenant right now; retry after `Retry-After`.' },
  concurrent_change: { status: 409, meaning: 'What the request changes was changed by another request meanwhile; retry it.' },
  version_mismatch: {
    status: 412,
    meaning: '`If-Match` names another version than the current one (or the record is gone): read it again.',
  },
  idempotency_key_reused: { status: 409, meaning: 'The `Idempotency-Key` was used with a different request.' },
  idempotency_key_in_progress: {
    status: 409,
    meaning: 'A request with this `Idempotency-Key` is still running; retry after `Retry-After`.',
  },
  idempotency_answer_not_kept: {
    status: 409,
    meaning: 'The first request with this `Idempotency-Key` succeeded, but its answer was too large to keep.',
  },
  login_taken: { status: 409, meaning: 'The tenant already has a user with this login (case and width folded).' },
  agent_name_taken: { status: 409, meaning: 'The tenant already has an agent with this name.' },
  agent_limit: { status: 409, meaning: 'The tenant has as many agents as it may.' },
  group_limit: { status: 409, meaning: 'The tenant has as many groups as it may (1,000).' },
  membership_limit: { status: 409, meaning: 'The tenant has as many memberships, over all its groups, as it may (200,000).' },
  user_limit: { status: 409, meaning: 'The tenant has as many users as it may (100,000): delete one first.' },
  datamart_limit: { status: 409, meaning: 'The tenant has as many datamarts as it may (1,000): delete one first.' },
  alert_limit: { status: 409, meaning: 'The tenant has as many alerts as it may (1,000): delete one first.' },
  schedule_limit: {
    status: 409,
    meaning: 'The tenant has as many schedules as it may (10,000): a new id is refused; replacing one is not.',
  },
  permission_limit: {
    status: 409,
    meaning:
      "The permission records would take the subject's share of a user's effective permissions past its quota (a user's own records 1 MB, all the tenant's group records 4 MB, counted as the answer carries them).",
  },
  template_name_taken: { status: 409, meaning: 'The client already has a template with this name: `errors` names it.' },
  template_is_default: { status: 409, meaning: "The template is the client's default: set another default first." },
  rollout_in_progress: {
    status: 409,
    meaning: 'Another rollout of the template is running or paused (the message names it): let it finish, or cancel it.',
  },
  rollout_state: {
    status: 409,
    meaning: 'The rollout is not in a state that allows this (only a running rollout pauses, only a paused one resumes).',
  },
  tenant_quota: {
    status: 409,
    meaning: 'The client has as many live tenants as it may (10,000): a deleted tenant frees its place.',
  },
  template_limit: { status: 409, meaning: 'The client has as many templates as it may (1,000): delete one first.' },
  template_version_limit: {
    status: 409,
    meaning: 'The template has as many versions as it may (1,000): publish the bundle as a new template.',
  },
  flow_cycle: {
    status: 409,
    meaning:
      "The tenant's flows, or the flows an apply would leave it, form a dependency cycle: `errors` names each cycle's flows. An apply so refused wrote nothing; a reload so refused queued nothing (an apply that changes one of the flows ends it).",
  },
  resource_limit: {
    status: 409,
    meaning:
      'The apply would give the tenant more flows, tables or template resources than it may have: `errors` names each limit; nothing was written.',
  },
  minute_triggers_in_use: { status: 409, meaning: 'Schedules with Minute triggers keep `schedulingGranularity` at minutes.' },
  run_finished: { status: 409, meaning: 'The run has finished: its status cannot change.' },
  run_not_failed: { status: 409, meaning: 'Only a failed run can be retried; nothing was queued.' },
  agent_offline: {
    status: 409,
    meaning: "The run's agent sent no heartbeat in the last 2 minutes, so its load was not queued: retry once it is online.",
  },
  no_webhook: { status: 409, meaning: 'The tenant has no webhook configured.' },
  channel_inactive: { status: 409, meaning: "The alert's webhook channel, or the tenant's webhook, is off." },
  delivery_not_failed: { status: 409, meaning: 'Only a failed delivery can be redelivered.' },
  payload_expired: { status: 409, meaning: "The delivery's payload has expired and cannot be sent again." },
  payload_too_large: {
    status: 413,
    meaning: 'The body, or what it would make (a webhook body, a schedule stored or as YAML), is over its limit.',
  },
  unsupported_media_type: { status: 415, meaning: 'The body is not in a media type (or charset) the route takes.' },
  too_many_requests: {
    status: 429,
    meaning: "Over a caller's limit at the edge (the WAF answers it, before any function runs): retry after `Retry-After`.",
    answeredAtEdge: true,
  },
  internal_error: { status: 500, meaning: 'Something failed on our side; the logs have it under the same `requestId`.' },
  no_signing_key: { status: 503, meaning: 'Login tokens cannot be issued yet: the service has no signing key.' },
} as const satisfies Record<string, { status: number; meaning: string; answeredAtEdge?: true }>;

export type ErrorCode = keyof typeof errorCodes;

/** The codes of one status: what a helper for that status takes. */
export type ErrorCodeOf<Status extends number> = {
  [Code in ErrorCode]: (typeof errorCodes)[Code]['status'] extends Status ? Code : never;
}[ErrorCode];
