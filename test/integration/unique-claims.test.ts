/**
 * Every declared uniqueness rule (an entity's `unique`, functions/core/store/entity-declarations.ts)
 * against DynamoDB Local, through the write primitives made from it (store/claims.ts): a free value
 * is taken once; a taken one is refused; a takeover happens only where the rule allows it, and only
 * from a holder that is gone; a release happens only where the rule allows it, and, for a claim
 * released while held, never from under another holder. The class, not the three claims one by one:
 * a rule declared tomorrow is tested here the day it is declared.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { claimWrites } from '#functions/core/store/claims.ts';
import { deleteAll, putAll } from '#functions/core/store/dynamo.ts';
import type { Entity, EntityDeclaration } from '#functions/core/store/entities.ts';
import { entities } from '#functions/core/store/entity-declarations.ts';
import { transaction } from '#functions/core/store/transaction.ts';
import { valuesOf } from '#test/support/facet-arbitraries.ts';

type AnyEntity = Entity<EntityDeclaration>;

/** Ids no other test (or run of a property) uses: the table is shared, and fast-check repeats its small ids. */
let lastId = 9_000_000_000 + Math.floor(Math.random() * 1_000_000_000);

const rules = Object.values(entities as unknown as Record<string, AnyEntity>).flatMap((holder) =>
  (holder.declaration.unique ?? []).map((rule) => ({ holder, rule, claim: rule.claim as AnyEntity })),
);

/** Commits the items as one transaction: whether it was written. */
const commits = async (items: ReturnType<ReturnType<typeof claimWrites>['take']>) =>
  (
    await transaction<'claim'>()
      .add('claim', ...items)
      .commit()
  ).written;

test('the three uniqueness rules the service keeps are declared', () => {
  expect(rules.map(({ holder, rule }) => `${holder.name}.${rule.attribute}`).sort()).toEqual([
    'agent.nome',
    'template.nome',
    'user.login',
  ]);
});

describe.each(rules)('$holder.name.$rule.attribute', ({ holder, rule, claim }) => {
  const writes = claimWrites(claim, holder);
  const facets = [...claim.facets, ...holder.facets];
  // Any text for the claimed value; ids of their own, so that no two runs name one claim.
  const claimed = valuesOf(facets).map((values) =>
    Object.fromEntries(Object.entries(values).map(([name, value]) => [name, typeof value === 'number' ? (lastId += 1) : value])),
  );
  const holderKey = (values: Record<string, unknown>, holderId: number) =>
    holder.key({ ...values, [rule.holder]: holderId } as never);

  test('a free value is taken once; a taken one is refused, whoever asks', async () => {
    await fc.assert(
      fc.asyncProperty(claimed, async (values) => {
        expect(await commits(writes.take(values as never, 1))).toBe(true);
        expect(await writes.holderOf(values as never)).toBe(1);
        expect(await commits(writes.take(values as never, 2))).toBe(false);
        expect(await commits(writes.take(values as never, 1))).toBe(false);
        expect(await writes.holderOf(values as never)).toBe(1);
        expect(await writes.takeAlone(values as never, 3)).toBe(false);
      }),
      { numRuns: 5 },
    );
  });

  test(`a takeover: ${rule.takeover}`, async () => {
    await fc.assert(
      fc.asyncProperty(claimed, async (values) => {
        expect(await writes.takeAlone(values as never, 1)).toBe(true);
        if (rule.takeover === 'never') {
          expect(() => writes.take(values as never, 2, 1)).toThrow(/never taken over/);
          return;
        }
        // While its holder exists, the claim stays theirs; a takeover naming the wrong holder is refused too.
        await putAll([holderKey(values, 1)]);
        expect(await commits(writes.take(values as never, 2, 1))).toBe(false);
        await deleteAll([holderKey(values, 1)]);
        expect(await commits(writes.take(values as never, 2, 7))).toBe(false);
        expect(await commits(writes.take(values as never, 2, 1))).toBe(true);
        expect(await writes.holderOf(values as never)).toBe(2);
        // Taken over once: the first holder's name no longer takes it.
        expect(await commits(writes.take(values as never, 3, 1))).toBe(false);
      }),
      { numRuns: 5 },
    );
  });

  test(`a release: ${rule.release}`, async () => {
    await fc.assert(
      fc.asyncProperty(claimed, async (values) => {
        expect(await writes.takeAlone(values as never, 1)).toBe(true);
        if (rule.release === 'never') {
          expect(() => writes.release(values as never, 1)).toThrow(/never released/);
          return;
        }
        const released = (holderId: number) => commits([writes.release(values as never, holderId)]);
        if (rule.release === 'while-held') expect(await released(2)).toBe(false);
        expect(await writes.holderOf(values as never)).toBe(1);
        expect(await released(1)).toBe(true);
        expect(await writes.holderOf(values as never)).toBeUndefined();
        expect(await commits(writes.take(values as never, 2))).toBe(true);
      }),
      { numRuns: 5 },
    );
  });
});
