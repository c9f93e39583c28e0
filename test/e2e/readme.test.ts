import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, inject, test } from 'vitest';
import { projectRoot } from '../support/processes.ts';

/**
 * Runs one of the README's curl sessions exactly as written, with only the address and the
 * client token swapped for the test twin's, in a scratch folder that sees the project's examples.
 * Returns each line it printed, parsed as JSON.
 */
async function runReadmeSession(name: string) {
  const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
  const block = new RegExp(`<!-- readme-session: ${name}\\b[^>]*-->\\s*\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(readme)?.[1];
  expect(block, `README block ${name}`).toBeDefined();
  const script = (block ?? '')
    .replaceAll('http://localhost:3000', inject('twinUrl'))
    .replaceAll('cli_local_demo_token_0123456789', inject('localClientToken'));
  const workDir = mkdtempSync(join(tmpdir(), 'readme-'));
  symlinkSync(join(projectRoot, 'examples'), join(workDir, 'examples'));
  try {
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], { cwd: workDir });
    return stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

test('the README tenant session works as written', async () => {
  const answers = await runReadmeSession('tenants');
  expect(answers).toHaveLength(5);
  const [created, own, listed, deleted, afterDelete] = answers;
  expect(created.data).toMatchObject({ nome: 'Acme', ativo: true });
  expect(own.data).toMatchObject({ id: created.data.id, applications: [], desks: [] });
  expect(listed.data).toContainEqual({ id: created.data.id, nome: 'Acme', dominio: created.data.dominio, ativo: true });
  expect(deleted).toEqual({ status: 'success', data: true });
  expect(afterDelete).toMatchObject({ status: 'error', code: 'unauthorized' });
});

test('the README template session works as written', async () => {
  const answers = await runReadmeSession('templates');
  expect(answers).toHaveLength(8);
  const [published, tenant, agent, firstBeat, applied, reloaded, secondBeat, runs] = answers;
  expect(published.data).toMatchObject({ nome: 'Retail analytics', version: 1 });
  expect(tenant.data).toMatchObject({ nome: 'Beta', ativo: true });
  expect(agent.data).toMatchObject({ id: 1, token: expect.stringMatching(/^agt_/) });
  expect(firstBeat.data.runs).toEqual([]);
  expect(applied.reloadPlan).toHaveLength(3);
  expect(reloaded.results.map((result: { status: string }) => result.status)).toEqual(['enqueued', 'enqueued', 'enqueued']);
  expect(secondBeat.data.runs.map((run: { flowId: number }) => run.flowId)).toEqual(
    applied.reloadPlan.map((item: { flowId: number }) => item.flowId),
  );
  expect(runs.data).toHaveLength(3);
});
