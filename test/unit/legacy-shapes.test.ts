/**
 * Earlier shapes are read only by the migrations that rewrite them (functions/core/migrations/):
 * no other module of functions/ names an entity declared `legacy`, nor the index entries an earlier
 * version gave an entity (`legacyIndexes`). What a migration reads, a reader never has to.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect, test } from 'vitest';
import type { DeclaredEntity } from '#functions/core/store/entities.ts';
import { entities } from '#functions/core/store/entity-declarations.ts';

const root = join(import.meta.dirname, '..', '..');
const allowed = [/^functions\/core\/migrations\//, /^functions\/core\/store\/entit(y-declarations|ies)\.ts$/];

function sources(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [relative(root, path)] : [];
  });
}

const legacyNames = Object.values<DeclaredEntity>(entities).flatMap((entity) => (entity.declaration.legacy ? [entity.name] : []));

test('the earlier shapes are declared, and read only by the migrations', () => {
  expect(legacyNames).toEqual(['datamartTable', 'datamartOwner']);
  const readers = sources(join(root, 'functions'))
    .filter((file) => !allowed.some((pattern) => pattern.test(file)))
    .flatMap((file) => {
      const text = readFileSync(join(root, file), 'utf8');
      const named = legacyNames.filter((name) => new RegExp(`\\.${name}\\b`).test(text));
      return [...named, ...(text.includes('legacyIndexes') ? ['legacyIndexes'] : [])].map((name) => `${file}: ${name}`);
    });
  expect(readers).toEqual([]);
});
