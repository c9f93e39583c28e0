import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, inject, test } from 'vitest';
import { projectRoot } from '../support/processes.ts';

/** The README's curl session, exactly as written, with only the address and the token swapped for the test twin's. */
test('the README curl session works as written', async () => {
  const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
  const block = /<!-- readme-session[^>]*-->\s*```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  expect(block).toBeDefined();
  const script = (block ?? '')
    .replaceAll('http://localhost:3000', inject('twinUrl'))
    .replaceAll('cli_local_demo_token_0123456789', inject('localClientToken'));
  const workDir = mkdtempSync(join(tmpdir(), 'readme-'));
  try {
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], { cwd: workDir });
    const answers = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(answers).toHaveLength(5);
    const [created, own, listed, deleted, afterDelete] = answers;
    expect(created.data).toMatchObject({ nome: 'Acme', ativo: true });
    expect(own.data).toMatchObject({ id: created.data.id, applications: [], desks: [] });
    expect(listed.data).toContainEqual({ id: created.data.id, nome: 'Acme', dominio: created.data.dominio, ativo: true });
    expect(deleted).toEqual({ status: 'success', data: true });
    expect(afterDelete).toMatchObject({ status: 'error', code: 'unauthorized' });
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
});
