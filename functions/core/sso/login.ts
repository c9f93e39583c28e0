import type { LoginBody } from '#functions/core/api/validators/login.cjs';
import { headlineDetail } from '#functions/core/api/validation.ts';
import { findUserByLogin } from '#functions/core/directory/directory-repository.ts';
import { userNotFound } from '#functions/core/directory/users.ts';
import { apiConfig } from '#functions/core/config.ts';
import { badRequest } from '#functions/core/errors.ts';
import { findTenant, tenantInactive, tenantNotFound } from '#functions/core/tenants/tenant-repository.ts';
import { issueLoginToken } from './login-tokens.ts';
import { issueInstant, voidUntil } from './revocation.ts';
import { resolveSitePath } from './site-path.ts';

/**
 * Spec 4.6's URL: `https://{tenant_domain}/auth/api/<token>`, with `showMenu`, `showDesksIcon` and
 * `ref` (Base64 of the route) when asked for. The origin pattern is configurable (the local twin
 * serves plain http on its port).
 */
export function loginUrl(dominio: string, token: string, options: Omit<LoginBody, 'login'>): string {
  const url = new URL(`/auth/api/${token}`, apiConfig().tenantOrigin.replace('{dominio}', dominio));
  if (options.showMenu !== undefined) url.searchParams.set('showMenu', String(options.showMenu));
  if (options.showDesksIcon !== undefined) url.searchParams.set('showDesksIcon', String(options.showDesksIcon));
  if (options.route !== undefined) url.searchParams.set('ref', Buffer.from(options.route, 'utf8').toString('base64'));
  return url.toString();
}

/**
 * POST /tenant/login: a new signed login token for a user of this tenant, and the ready URL. A
 * `route` the landing would not follow (one that resolves off the tenant's site) is a 400: the URL
 * never carries a destination that would silently become `/`.
 */
export async function createLogin(tenantId: number, request: LoginBody, now = Date.now()) {
  if (request.route !== undefined && !resolveSitePath(request.route)) {
    const errors = [
      { location: 'body' as const, pointer: '/route', message: 'must be a path on the tenant’s own site once resolved' },
    ];
    throw badRequest(`Invalid request body${headlineDetail(errors)}`, errors, 'validation_failed');
  }
  const tenant = await findTenant(tenantId);
  if (!tenant || tenant.deletedAt) throw tenantNotFound();
  if (!tenant.ativo) throw tenantInactive();
  const user = await findUserByLogin(tenantId, request.login);
  if (!user) throw userNotFound();
  // Issued after any revocation read here, even by a clock behind the one that revoked (revocation.ts).
  const issuedAtMs = issueInstant(now, voidUntil(tenant, user));
  const subject = { tenantId, dominio: tenant.dominio, userId: user.userId, login: user.login };
  const token = await issueLoginToken(subject, now, issuedAtMs);
  const { login: _login, ...options } = request;
  return { success: true, token, url: loginUrl(tenant.dominio, token, options) };
}
