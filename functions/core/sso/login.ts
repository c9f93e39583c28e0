import type { LoginBody } from '#functions/core/api/validators/login.cjs';
import { findUserByLogin } from '#functions/core/directory/directory-repository.ts';
import { userNotFound } from '#functions/core/directory/users.ts';
import { apiConfig } from '#functions/core/config.ts';
import { findTenant, tenantInactive, tenantNotFound } from '#functions/core/tenants/tenant-repository.ts';
import { issueLoginToken } from './login-tokens.ts';

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

/** POST /tenant/login: a new signed login token for a user of this tenant, and the ready URL. */
export async function createLogin(tenantId: number, request: LoginBody, now = Date.now()) {
  const tenant = await findTenant(tenantId);
  if (!tenant || tenant.deletedAt) throw tenantNotFound();
  if (!tenant.ativo) throw tenantInactive();
  const user = await findUserByLogin(tenantId, request.login);
  if (!user) throw userNotFound();
  const token = await issueLoginToken({ tenantId, dominio: tenant.dominio, userId: user.userId, login: user.login }, now);
  const { login: _login, ...options } = request;
  return { success: true, token, url: loginUrl(tenant.dominio, token, options) };
}
