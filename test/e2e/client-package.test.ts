/**
 * The typed client as an integrator gets it: `npm pack ./client` (its prepack compiles it to
 * JavaScript and declarations), installed from the tarball into an empty project outside this
 * repository (so nothing resolves from our node_modules), compiled under the strictest consumer
 * settings (strict, exactOptionalPropertyTypes, NodeNext, the package's declarations checked), and
 * run with plain node (no tsx, no bundler) against the twin.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { projectRoot } from '#test/support/processes.ts';

const run = promisify(execFile);
const consumer = mkdtempSync(join(tmpdir(), 'client-consumer-'));
afterAll(() => rmSync(consumer, { recursive: true, force: true }));

const strictest = {
  compilerOptions: {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    lib: ['ES2023', 'DOM'],
    types: [],
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    skipLibCheck: false,
    outDir: 'out',
  },
  files: ['consumer.ts'],
};

/** An integrator's program: a tenant created, read with its own token, the list walked, a refusal typed. */
const program = (baseUrl: string, clientToken: string) => `
import { each, integratorClient, must, ServiceError, tenantClient } from '@bi-tenant-admin/client';

const options = { baseUrl: ${JSON.stringify(baseUrl)} };
const integrator = integratorClient(${JSON.stringify(clientToken)}, options);
const created = await must(integrator.POST('/tenants', { body: { nome: 'Packed client', ativo: true } }));
const tenant = tenantClient(created.data.token, options);
const own = await must(tenant.GET('/tenant'));
let listed = 0;
for await (const listedTenant of each((cursor) =>
  must(integrator.GET('/tenants', { params: { query: cursor === undefined ? {} : { cursor } } })),
)) {
  if (listedTenant.id === own.data.id) listed += 1;
}
let refused = '';
try {
  await must(tenant.GET('/tenant/users/{id}', { params: { path: { id: 999999 } } }));
} catch (error) {
  if (error instanceof ServiceError) refused = \`\${error.status} \${error.code}\`;
}
// @ts-expect-error a tenant route is not on the integrator's client
export const neverCalled = () => integrator.GET('/tenant');
console.log(JSON.stringify({ nome: own.data.nome, sameTenant: own.data.id === created.data.id, listed, refused }));
`;

let installed: string[];
let tarball: string;
beforeAll(async () => {
  // As README says: `npm pack ./client` from the repository.
  const packed = await run('npm', ['pack', './client', '--json', '--pack-destination', consumer], { cwd: projectRoot });
  const [{ filename }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string }];
  tarball = filename;
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // Its one dependency comes from npm's cache when `npm ci` put it there, else from the registry.
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(consumer, filename)], { cwd: consumer });
  installed = readdirSync(join(consumer, 'node_modules/@bi-tenant-admin/client'), { recursive: true }) as string[];
}, 120_000);

test('README names the tarball npm pack makes', () => {
  expect(readFileSync(join(projectRoot, 'README.md'), 'utf8')).toContain(`npm install <path>/${tarball}`);
});

test('the package holds compiled JavaScript and declarations, no TypeScript source', () => {
  expect(installed.filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))).toEqual([]);
  expect(installed).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'package.json']));
});

test('a strict consumer compiles against it, and runs with plain node against the twin', async () => {
  writeFileSync(join(consumer, 'tsconfig.json'), JSON.stringify(strictest));
  writeFileSync(join(consumer, 'consumer.ts'), program(inject('twinUrl'), inject('localClientToken')));
  const tsc = join(projectRoot, 'node_modules/typescript/bin/tsc');
  const compiled = await run(process.execPath, [tsc, '-p', consumer]).catch((error: { stdout: string }) => error);
  expect(compiled.stdout, 'the consumer compiles').toBe('');
  const ran = await run(process.execPath, [join(consumer, 'out/consumer.js')], { cwd: consumer });
  expect(JSON.parse(ran.stdout.trim())).toEqual({
    nome: 'Packed client',
    sameTenant: true,
    listed: 1,
    refused: '404 user_not_found',
  });
}, 60_000);
