import { httpHandler } from '#functions/core/api/http-handler.ts';

/**
 * Everything the page loads comes from this service: Swagger UI's script and styles from
 * GET /docs/{asset}, the document from GET /openapi.json. No inline script or style, no other
 * origin; `data:` images are Swagger UI's icons, inlined in its style sheet.
 */
export const contentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

// Relative URLs: from /docs, `docs/x` is /docs/x and `openapi.json` (in docs.js) is /openapi.json.
const page = [
  '<!doctype html><html lang="en"><head><meta charset="utf-8">',
  '<meta name="viewport" content="width=device-width, initial-scale=1">',
  '<title>BI tenant administration API</title>',
  '<link rel="icon" href="data:,"><link rel="stylesheet" href="docs/swagger-ui.css">',
  '</head><body><div id="swagger-ui"></div>',
  '<script src="docs/swagger-ui-bundle.js"></script><script src="docs/docs.js"></script>',
  '</body></html>',
].join('');

/** GET /docs: the API documentation page, Swagger UI rendering GET /openapi.json. */
export const handler = httpHandler(async () => ({
  status: 200,
  body: page,
  headers: {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': contentSecurityPolicy,
    'cache-control': 'public, max-age=300',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  },
}));
