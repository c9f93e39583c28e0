import { type ApiResponse, httpHandler, queryParameter } from '#functions/core/api/http-handler.ts';
import { LandingError, type LandingProblem, land } from '#functions/core/sso/landing.ts';

const pages: Record<LandingProblem, { status: number; title: string; text: string }> = {
  expired: {
    status: 401,
    title: 'This sign-in link has expired',
    text: 'Sign-in links are valid for one hour. Ask for a new one.',
  },
  invalid: {
    status: 401,
    title: 'This sign-in link is not valid',
    text: 'It was not issued for this address, or its signature does not verify.',
  },
  revoked: {
    status: 401,
    title: 'This sign-in link was revoked',
    text: 'The user, their access or the tenant is no longer active.',
  },
  malformed: { status: 401, title: 'This is not a sign-in link', text: 'The token in the address is damaged or incomplete.' },
  malformed_ref: {
    status: 400,
    title: 'This sign-in link has a damaged destination',
    text: 'Its ref parameter is not valid Base64.',
  },
};

const html = (title: string, text: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title></head>` +
  `<body><h1>${title}</h1><p>${text}</p></body></html>`;

/** GET /auth/api/{token}: opens a session and redirects into the BI, or says plainly why not. */
export const handler = httpHandler(async (request): Promise<ApiResponse> => {
  try {
    const { location, cookie } = await land(request.pathParameters.token ?? '', request.host, {
      ref: queryParameter(request, 'ref'),
      showMenu: queryParameter(request, 'showMenu'),
      showDesksIcon: queryParameter(request, 'showDesksIcon'),
    });
    return {
      status: 302,
      body: '',
      headers: { location, 'content-type': 'text/plain', 'cache-control': 'no-store' },
      cookies: [cookie],
    };
  } catch (error) {
    if (!(error instanceof LandingError)) throw error;
    const page = pages[error.problem];
    return {
      status: page.status,
      body: html(page.title, page.text),
      headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', 'x-landing-problem': error.problem },
    };
  }
});
