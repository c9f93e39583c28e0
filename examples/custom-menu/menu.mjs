// Builds a custom menu for one user (spec 4.6, last paragraph): links that open each application of
// the tenant in the BI, already signed in, without the BI's own menu (showMenu=0, ref=Base64 route).
//
//   node examples/custom-menu/menu.mjs <service URL> <tenant token> <user login>
//
// An integrator's backend does the same: GET /tenant (applications, desks), GET /tenant/users (the
// user, their groups and effective permissions), one POST /tenant/login per user session.
const [serviceUrl, tenantToken, login] = process.argv.slice(2);
if (!serviceUrl || !tenantToken || !login) {
  console.error('usage: node examples/custom-menu/menu.mjs <service URL> <tenant token> <user login>');
  process.exit(2);
}

async function call(method, path, body) {
  const response = await fetch(new URL(path, serviceUrl), {
    method,
    headers: { authorization: `Bearer ${tenantToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${answer.message}`);
  return answer;
}

async function findUser() {
  let cursor = null;
  do {
    const page = await call('GET', `/tenant/users?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    const user = page.data.find((candidate) => candidate.login.toLowerCase() === login.toLowerCase());
    if (user) return user;
    cursor = page.nextCursor;
  } while (cursor);
  throw new Error(`No user ${login} in this tenant`);
}

const tenant = (await call('GET', '/tenant')).data;
const user = await findUser();
// One login token per user session: it is reusable for an hour, so every link of the menu shares it.
const { url } = await call('POST', '/tenant/login', { login, showMenu: 0 });
const linkTo = (route) => {
  const link = new URL(url);
  link.searchParams.set('ref', Buffer.from(route, 'utf8').toString('base64'));
  return link.toString();
};

const menu = {
  user: { id: user.id, nome: user.nome, groups: user.groups.map((group) => group.nome) },
  applications: tenant.applications.map((application) => ({ nome: application.nome, href: linkTo(application.route) })),
  // With datamarts, user.permissions says which tables this user may see: a menu can hide the rest.
  desks: tenant.desks.map((desk) => ({ nome: desk.nome, tables: desk.tables.map((table) => table.nome) })),
};
console.log(JSON.stringify(menu, null, 2));
