import { expect, test } from 'vitest';
import { keys } from '#functions/core/store/keys.ts';

/** Lists come back in sort-key order: ids must sort as numbers (9 before 10), not as strings. */
test.each([
  ['template', (id: number) => keys.template(1, id).sk],
  ['template version', (id: number) => keys.templateVersion(1, 1, id).sk],
  ['tenant resource', (id: number) => keys.tenantResource(1, 'table', id).sk],
  ['agent', (id: number) => keys.agent(1, id).sk],
  ['run', (id: number) => keys.run(1, id).sk],
  ['user', (id: number) => keys.user(1, id).sk],
  ['group', (id: number) => keys.group(1, id).sk],
  ['membership', (id: number) => keys.membership(1, id, id).sk],
  ['datamart table', (id: number) => keys.datamartTable(1, 1, id).sk],
  ['client index', (id: number) => keys.clientsIndex(id).gsi1sk],
  ['tenant index', (id: number) => keys.clientTenantsIndex(1, id).gsi1sk],
  ['datamart index', (id: number) => keys.datamartsIndex(1, id).gsi1sk],
  ['datamart owners index', (id: number) => keys.datamartOwnersIndex(1, id).gsi1sk],
  ['permission index, by subject', (id: number) => keys.permissionIndex(1, 1, 'user', id, 1).gsi1sk],
  ['permission index, by datamart', (id: number) => keys.permissionIndex(1, id, 'group', 1, 1).gsi1sk],
  ['permission index, by table', (id: number) => keys.permissionIndex(1, 1, 'user', 1, id).gsi1sk],
])('%s sort keys order numerically', (_name, sortKey) => {
  const ids = [1, 9, 10, 99, 100, 12345];
  const sorted = [...ids].sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : 1));
  expect(sorted).toEqual(ids);
});
