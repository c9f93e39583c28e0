/**
 * The writes that keep an attribute unique, made from its declared rule (entities.ts `UniqueClaim`):
 * one place says how a claim is taken, taken over and released, and a repository only names the
 * values. A claim is one item whose key is made from the attribute's value and which names its
 * holder; it is put with `attribute_not_exists` in the holder's own transaction, never read first.
 */
import { getItem, tableName, type TransactItem, writeItem } from './dynamo.ts';
import type { DeclaredEntity, Entity, EntityDeclaration, UniqueClaim } from './entities.ts';

type ClaimValues<Claim> = Claim extends Entity<infer D> ? Parameters<Entity<D>['key']>[0] : never;

export interface ClaimWrites<Values> {
  /**
   * The claim's items for the holder's transaction: the claim, free. `takeOverFrom`: the claim names
   * that holder, who is gone (only where the rule allows a takeover): it is taken while it still
   * names them and they are still gone, with a check of the holder's absence as a second item.
   */
  take(values: Values, holderId: number, takeOverFrom?: number): TransactItem[];
  /** The claim's deletion, in its holder's transaction: as the rule says (only while it still names the holder, or outright). */
  release(values: Values, holderId: number): TransactItem;
  /** The holder a claim names (a consistent read), or undefined when the value is free. */
  holderOf(values: Values): Promise<number | undefined>;
  /** Takes a free claim on its own, outside a transaction (a migration claiming what older data left unclaimed); `false` when it was taken. */
  takeAlone(values: Values, holderId: number): Promise<boolean>;
  /** Whether two values take the same claim (a rename that moves it), as the claim's key writes them. */
  same(one: Values, other: Values): boolean;
}

/** The rule of `holder`'s declaration that `claim` keeps: an error if none does (a claim of no declared rule). */
function ruleOf(holder: DeclaredEntity, claim: DeclaredEntity): UniqueClaim {
  const rule = holder.declaration.unique?.find((each) => each.claim === claim);
  if (!rule) throw new Error(`${holder.name} declares no unique rule kept by ${claim.name}`);
  return rule;
}

/** The write primitives of the unique rule `claim` keeps for `holder`'s items. */
export function claimWrites<const C extends EntityDeclaration, const H extends EntityDeclaration>(
  claim: Entity<C>,
  holder: Entity<H>,
): ClaimWrites<ClaimValues<Entity<C>>> {
  const rule = ruleOf(holder, claim);
  const holderKey = (values: ClaimValues<Entity<C>>, holderId: number) =>
    holder.key({ ...(values as object), [rule.holder]: holderId } as never);
  const item = (values: ClaimValues<Entity<C>>, holderId: number) => ({ ...claim.key(values), [rule.holder]: holderId });
  const held = (holderId: number) => ({
    ConditionExpression: '#holder = :holder',
    ExpressionAttributeNames: { '#holder': rule.holder },
    ExpressionAttributeValues: { ':holder': holderId },
  });
  const free = { ConditionExpression: 'attribute_not_exists(pk)' };
  return {
    take(values, holderId, takeOverFrom) {
      if (takeOverFrom === undefined) return [{ Put: { TableName: tableName(), Item: item(values, holderId), ...free } }];
      if (rule.takeover !== 'when-holder-gone') throw new Error(`A ${claim.name} is never taken over`);
      return [
        { Put: { TableName: tableName(), Item: item(values, holderId), ...held(takeOverFrom) } },
        { ConditionCheck: { TableName: tableName(), Key: holderKey(values, takeOverFrom), ...free } },
      ];
    },
    release(values, holderId) {
      if (rule.release === 'never') throw new Error(`A ${claim.name} is never released`);
      const conditions = rule.release === 'while-held' ? held(holderId) : {};
      return { Delete: { TableName: tableName(), Key: claim.key(values), ...conditions } };
    },
    async holderOf(values) {
      const found = await getItem<Record<string, unknown>>(claim.key(values));
      return found?.[rule.holder] as number | undefined;
    },
    takeAlone: (values, holderId) => writeItem({ Put: { TableName: tableName(), Item: item(values, holderId), ...free } }),
    same: (one, other) => {
      const [first, second] = [claim.key(one), claim.key(other)];
      return first.pk === second.pk && first.sk === second.sk;
    },
  };
}
