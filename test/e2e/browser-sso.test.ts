import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, test } from 'vitest';
import { launchChromium } from '#test/support/browser.ts';
import { api, newClient, newTenant } from '#test/support/api.ts';

/** The integrator's page, on another site than the tenant domain: the BI is a third-party iframe. */
async function serveHostPage(loginUrl: string) {
  const server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(`<!doctype html><title>Integrator</title><iframe id="bi" src="${loginUrl}" width="900" height="600"></iframe>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://localhost:${(server.address() as AddressInfo).port}/`, close: () => server.close() };
}

test(
  'an integrator page embeds the login URL in an iframe; the BI route loads with the session',
  { timeout: 60_000 },
  async () => {
    const client = await newClient();
    const tenant = await newTenant(client.token, { nome: 'Embedded' });
    await api('POST', '/tenant/users', { token: tenant.token, body: { login: 'ana@acme.com', nome: 'Ana' } });
    const body = { login: 'ana@acme.com', showMenu: 0, route: '/apps/sales' };
    const { url } = (await api('POST', '/tenant/login', { token: tenant.token, body })).body;

    const hostPage = await serveHostPage(url);
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const arrived = page.waitForEvent('framenavigated', {
        predicate: (frame) => new URL(frame.url()).pathname === '/apps/sales',
        timeout: 20_000,
      });
      await page.goto(hostPage.url);
      // The landing answers the iframe with a redirect to the route, where the BI (the twin's stand-in) loads.
      const frame = await arrived;
      expect(new URL(frame.url()).host).toBe(new URL(url).host);
      expect(new URL(frame.url()).searchParams.get('showMenu')).toBe('0');
      // It reads /auth/session with the cookie the landing set inside the iframe.
      await frame.waitForFunction("document.getElementById('who').textContent !== 'Reading the session…'", undefined, {
        timeout: 20_000,
      });
      expect(await frame.textContent('#who')).toBe('Signed in as ana@acme.com');
    } finally {
      await browser.close();
      hostPage.close();
    }
  },
);
