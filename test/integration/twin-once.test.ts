import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTwin } from '#local/twin.ts';

describe('startTwin', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'twin-once-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it('refuses a second twin in the same process, whose handlers would reach the first one’s emulators', async () => {
    // A data folder that cannot be created ends the first start before any emulator runs.
    const file = join(scratch, 'not-a-folder');
    writeFileSync(file, '');
    await expect(startTwin({ port: 0, dataDir: join(file, 'data') })).rejects.toThrow(/ENOTDIR/);
    await expect(startTwin({ port: 0 })).rejects.toThrow('A twin was already started in this process');
  });
});
