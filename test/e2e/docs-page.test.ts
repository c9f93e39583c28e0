import { readFileSync } from 'node:fs';
import { expect, inject, test } from 'vitest';
import { docsAssets } from '#functions/http/docs-asset.ts';
import { routes } from '#functions/routes.ts';
import { openApiFile } from '#tools/openapi/openapi-file.ts';
import { launchChromium } from '#test/support/browser.ts';
import { api, expectErrorEnvelope } from '#test/support/api.ts';
import { expectDocumented } from '#test/support/documented.ts';

test('GET /openapi.json serves the committed document, without a token', async () => {
  const answer = await api('GET', '/openapi.json');
  expect(answer.status).toBe(200);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  expect(answer.body).toEqual(JSON.parse(readFileSync(openApiFile, 'utf8')));
  // Minified, and like the page's files gzipped when accepted and revalidated by its ETag.
  const gzipped = await fetch(`${inject('twinUrl')}/openapi.json`);
  expect(gzipped.headers.get('content-encoding')).toBe('gzip');
  expect(await gzipped.text()).toBe(JSON.stringify(answer.body));
  const etag = gzipped.headers.get('etag') ?? '';
  expect(etag).toMatch(/^"[\w-]{27}"$/);
  expect((await fetch(`${inject('twinUrl')}/openapi.json`, { headers: { 'if-none-match': etag } })).status).toBe(304);
});

/** fetch, which asks for gzip and decodes it (the API helper reads the body as sent). */
async function fetchAsset(name: string, headers: Record<string, string> = {}): Promise<Response> {
  const answer = await fetch(`${inject('twinUrl')}/docs/${name}`, { headers });
  // The file's bytes are not parsed here: the status and the content type are what the document says of them.
  expectDocumented('GET', `/docs/${name}`, { status: answer.status, contentType: answer.headers.get('content-type'), body: '' });
  return answer;
}

test('GET /docs/{asset} serves its allow-list only, gzipped, revalidated by ETag', async () => {
  for (const name of ['package.json', 'index.html', 'swagger-ui-bundle.js.map', '..%2Fpackage.json']) {
    const error = expectErrorEnvelope(await api('GET', `/docs/${name}`), 404);
    expect(error.errors).toEqual([expect.objectContaining({ location: 'path', pointer: '/asset' })]);
  }
  for (const [name, type] of Object.entries(docsAssets)) {
    const answer = await fetchAsset(name);
    expect(answer.status, name).toBe(200);
    expect(answer.headers.get('content-type')).toBe(type);
    expect(answer.headers.get('content-encoding')).toBe('gzip');
    const text = await answer.text();
    if (name !== 'docs.js') {
      const installed = readFileSync(new URL(`../../node_modules/swagger-ui-dist/${name}`, import.meta.url), 'utf8');
      expect(text.length).toBeGreaterThan(installed.length - 100);
      expect(text).not.toContain('sourceMappingURL');
    }
    const etag = answer.headers.get('etag') ?? '';
    const again = await fetchAsset(name, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    const anyVersion = await fetchAsset(name, { 'if-none-match': '*' });
    expect(anyVersion.status).toBe(304);
  }
  // An encoding refused with q=0 is not used.
  const plain = await api('GET', '/docs/docs.js', { headers: { 'accept-encoding': 'gzip;q=0, identity' } });
  expect(plain.status).toBe(200);
  expect(plain.headers.get('content-encoding')).toBeNull();
  expect(plain.body).toContain('SwaggerUIBundle');
});

test(
  'the docs page renders every route with Swagger UI, and nothing it loads comes from elsewhere',
  { timeout: 60_000 },
  async () => {
    const origin = new URL(inject('twinUrl')).origin;
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      const requested: string[] = [];
      const problems: string[] = [];
      page.on('request', (request) => requested.push(request.url()));
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));

      const answer = await page.goto(`${origin}/docs`);
      expect(answer?.headers()['content-security-policy']).toContain("default-src 'none'");
      await page.waitForSelector('.opblock-summary-path', { timeout: 30_000 });

      const rendered = await page.$$eval('.opblock-summary', (summaries) =>
        summaries.map(
          (summary) =>
            `${summary.querySelector('.opblock-summary-method')?.textContent?.trim()} ` +
            `${summary.querySelector('.opblock-summary-path')?.getAttribute('data-path')}`,
        ),
      );
      for (const route of routes) expect(rendered, 'rendered operations').toContain(`${route.method} ${route.path}`);

      // The page, its script and styles, and the document: all from the twin (data: URLs are the icons).
      const elsewhere = requested.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin);
      expect(elsewhere).toEqual([]);
      expect(requested).toEqual(
        expect.arrayContaining([`${origin}/docs`, `${origin}/docs/swagger-ui-bundle.js`, `${origin}/openapi.json`]),
      );
      // Nothing was refused by the Content-Security-Policy, and Swagger UI reported no error.
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  },
);
