/**
 * The quotas on what a client (an integrator, with its client token) creates, so that no client
 * grows the table, or a list it reads (its tenants, its templates, a template's versions), without
 * bound. Each is kept by what the creating transaction itself conditions on (never read, then
 * written), as the tenants' quotas are (functions/core/directory/quotas.ts):
 *
 * - Live tenants: `COUNT#TENANTS` in the client's partition, added to by the tenant's creation and
 *   taken off by its deletion, each in its own transaction. A deleted tenant (a soft delete, kept
 *   for billing) frees its place.
 * - Templates: `COUNT#TEMPLATES` in the client's partition, kept by the template's publication and
 *   its deletion (DELETE /tenants/templates/{id}).
 * - Versions of one template: its record's `latestVersion`, which the next version's update already
 *   conditions on (`latestVersion = :previous`) and which is also its number of versions (versions
 *   are deleted only with their template).
 */

/** Live tenants a client may have (409 `tenant_quota`). */
export const maxTenantsPerClient = 10_000;

/** Templates a client may have (409 `template_limit`). */
export const maxTemplatesPerClient = 1_000;

/** Versions one template may have (409 `template_version_limit`): past it, publish a new template. */
export const maxVersionsPerTemplate = 1_000;
