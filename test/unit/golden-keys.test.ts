/**
 * The golden-key test: before any caller moves from store/keys.ts to the entity declarations
 * (store/entity-declarations.ts), every key, index entry, partition and prefix keys.ts builds must be
 * the declarations' output, byte for byte, over random ids and names. A builder no declaration
 * covers fails, named; so does a declared key prefix that could read another entity's items.
 */
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { nameKey } from '#functions/core/names.ts';
import type {
  Collection,
  DeclaredEntity,
  Entity,
  EntityDeclaration,
  Facet,
  FacetValues,
  KeyTemplate,
} from '#functions/core/store/entities.ts';
import {
  agent,
  agentCount,
  agentName,
  alert,
  applyJournal,
  client,
  clientCount,
  collections,
  datamart,
  datamartOwner,
  datamartTable,
  delivery,
  deliveryBody,
  dispatchCursor,
  dispatchShards,
  entities,
  followUp,
  group,
  idCounter,
  idempotency,
  membership,
  permission,
  recordedLoad,
  run,
  schedule,
  scheduleRun,
  session,
  template,
  templateName,
  templateVersion,
  tenant,
  tenantCount,
  tenantDeletionRecord,
  tenantIdCounter,
  tenantResource,
  tenantSettings,
  token,
  user,
  userLogin,
  webhookEndpoint,
  webhookSlot,
} from '#functions/core/store/entity-declarations.ts';
import * as keysModule from '#functions/core/store/keys.ts';
import { isIdempotencyRecord, keys } from '#functions/core/store/keys.ts';
import { tableDefinition } from '#functions/core/store/table-definition.ts';
import { resourceTypes } from '#functions/core/templates/tenant-resources.ts';
import { unseen } from '#test/support/unseen.ts';

// What each facet takes: ids of any size (padding stops at 12 digits, ids do not), hashes, ISO
// instants, and any Unicode text, with changes no reader sees where a facet folds it.

const ids = fc.maxSafeNat();
const sha256 = fc.stringMatching(/^[0-9a-f]{64}$/);
const instants = fc
  .date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2200-01-01T00:00:00Z'), noInvalidDate: true })
  .map((date) => date.toISOString());
const anyText = fc.string({ unit: 'binary' });
const readerText = fc.oneof(
  anyText,
  fc
    .tuple(fc.string(), fc.array(unseen, { maxLength: 3 }))
    .map(([word, changes]) => changes.reduce((text, change) => change(text), word)),
);
/** Text facets whose values have a shape of their own. */
const shapedText: Record<string, fc.Arbitrary<string>> = {
  tokenHash: sha256,
  sessionHash: sha256,
  keyHash: sha256,
  nextFireAt: instants,
  // A schedule run's slot (a webhook slot is a number).
  slot: instants,
  // A resource's type is one of these: never empty, which keys.ts's prefix would read as no type.
  type: fc.constantFrom(...resourceTypes),
};

function arbitraryOf(facet: Facet<string, never>): fc.Arbitrary<unknown> {
  switch (facet.kind) {
    case 'decimal':
    case 'sortable':
      return ids;
    case 'letter':
      return fc.constantFrom(...Object.keys(facet.letters ?? {}));
    case 'folded':
    case 'name-key':
      return readerText;
    case 'text':
      return shapedText[facet.name] ?? anyText;
  }
}

/** Random values for every facet of an entity's key and index entries. */
const facetsOf = <E extends DeclaredEntity>(entity: E) =>
  fc.record(Object.fromEntries(entity.facets.map((facet) => [facet.name, arbitraryOf(facet)]))) as unknown as fc.Arbitrary<
    FacetValues<E>
  >;

type AnyEntity = Entity<EntityDeclaration>;
const declaredEntities: readonly DeclaredEntity[] = Object.values(entities);

type Keys = typeof keys;
type Builder = keyof Keys;
type FunctionBuilder = { [K in Builder]: Keys[K] extends (...args: never[]) => unknown ? K : never }[Builder];
type ValueBuilder = Exclude<Builder, FunctionBuilder>;
type Args<F> = F extends (...args: infer A) => unknown ? A : never;

interface GoldenCase {
  builder: Builder;
  covers: DeclaredEntity | Collection;
  check: () => void;
}

/** keys.ts's `builder`, called with the arguments `args` makes of random `facets`, gives what `declared` makes of them. */
function goldenOver<K extends FunctionBuilder, F>(
  builder: K,
  covers: DeclaredEntity | Collection,
  facets: fc.Arbitrary<F>,
  args: (facets: F) => Args<Keys[K]>,
  declared: (facets: F) => unknown,
): GoldenCase {
  const build = keys[builder] as (...args: Args<Keys[K]>) => unknown;
  return {
    builder,
    covers,
    check: () =>
      fc.assert(
        fc.property(facets, (values) => {
          expect(declared(values)).toStrictEqual(build(...args(values)));
        }),
      ),
  };
}

/** The same, over random values of every facet of `entity`. */
const golden = <K extends FunctionBuilder, E extends DeclaredEntity>(
  builder: K,
  entity: E,
  args: (facets: FacetValues<E>) => Args<Keys[K]>,
  declared: (facets: FacetValues<E>) => unknown,
) => goldenOver(builder, entity, facetsOf(entity), args, declared);

/** The same, for a builder of `entity`'s primary key. */
const goldenKey = <K extends FunctionBuilder, E extends DeclaredEntity>(
  builder: K,
  entity: E,
  args: (facets: FacetValues<E>) => Args<Keys[K]>,
) => golden(builder, entity, args, (facets) => (entity as unknown as AnyEntity).key(facets as never));

/** keys.ts's constant `builder` is the declarations' value. */
const goldenValue = (builder: ValueBuilder, covers: DeclaredEntity | Collection, declared: string): GoldenCase => ({
  builder,
  covers,
  check: () => expect(declared).toBe(keys[builder]),
});

/** Prefixes take their facets in order: none, the first, the first two… */
const leading = <F extends object>(facets: fc.Arbitrary<F>, names: readonly (keyof F)[]) =>
  fc.tuple(facets, fc.nat({ max: names.length })).map(([values, count]) => {
    const given = new Set(names.slice(0, count));
    return Object.fromEntries(Object.entries(values).filter(([name]) => given.has(name as keyof F))) as Partial<F>;
  });

const cases: GoldenCase[] = [
  goldenKey('counter', idCounter, (f) => [f.name]),
  goldenKey('tenantCounter', tenantIdCounter, (f) => [f.tenantId, f.name]),
  goldenKey('client', client, (f) => [f.clientId]),
  goldenKey('clientCount', clientCount, (f) => [f.clientId, f.name]),
  golden(
    'clientsIndex',
    client,
    (f) => [f.clientId],
    (f) => client.indexEntry(f),
  ),
  goldenKey('token', token, (f) => [f.tokenHash]),
  goldenKey('tenant', tenant, (f) => [f.tenantId]),
  goldenKey('tenantCount', tenantCount, (f) => [f.tenantId, f.name]),
  golden(
    'clientTenantsIndex',
    tenant,
    (f) => [f.clientId, f.tenantId],
    (f) => tenant.indexEntry(f),
  ),
  goldenKey('tenantDeletionRecord', tenantDeletionRecord, (f) => [f.tenantId]),
  goldenKey('template', template, (f) => [f.clientId, f.templateId]),
  goldenValue('templatesPrefix', template, template.keyPrefix({})),
  goldenKey('templateVersion', templateVersion, (f) => [f.clientId, f.templateId, f.version]),
  golden(
    'templateVersionsPrefix',
    templateVersion,
    (f) => [f.templateId],
    (f) => templateVersion.keyPrefix({ templateId: f.templateId }),
  ),
  // Every caller passes keys.ts a name key; the declaration makes it from the name.
  goldenKey('templateName', templateName, (f) => [f.clientId, nameKey(f.nome)]),
  goldenKey('tenantResource', tenantResource, (f) => [f.tenantId, f.type, f.id]),
  goldenOver(
    'tenantResourcesPrefix',
    tenantResource,
    leading(facetsOf(tenantResource), ['type']),
    (f) => [f.type],
    (f) => tenantResource.keyPrefix(f),
  ),
  goldenKey('applyJournal', applyJournal, (f) => [f.tenantId]),
  goldenKey('agent', agent, (f) => [f.tenantId, f.agentId]),
  goldenValue('agentsPrefix', agent, agent.keyPrefix({})),
  goldenKey('agentName', agentName, (f) => [f.tenantId, f.nome]),
  goldenKey('agentCount', agentCount, (f) => [f.tenantId]),
  goldenKey('run', run, (f) => [f.tenantId, f.runId]),
  goldenValue('runsPrefix', run, run.keyPrefix({})),
  golden(
    'agentPendingRunsIndex',
    run,
    (f) => [f.tenantId, f.agentId, f.runId],
    (f) => run.indexEntry(f),
  ),
  goldenKey('user', user, (f) => [f.tenantId, f.userId]),
  goldenValue('usersPrefix', user, user.keyPrefix({})),
  goldenKey('userLogin', userLogin, (f) => [f.tenantId, f.login]),
  goldenKey('group', group, (f) => [f.tenantId, f.groupId]),
  goldenValue('groupsPrefix', group, group.keyPrefix({})),
  golden(
    'membership',
    membership,
    (f) => [f.tenantId, f.groupId, f.userId],
    (f) => ({ ...membership.key(f), ...membership.indexEntry(f) }),
  ),
  goldenOver(
    'membershipsPrefix',
    membership,
    leading(facetsOf(membership), ['groupId']),
    (f) => [f.groupId],
    (f) => membership.keyPrefix(f),
  ),
  golden(
    'userMembershipsIndex',
    membership,
    (f) => [f.tenantId, f.userId],
    (f) => membership.indexes.gsi1.partition(f),
  ),
  golden(
    'datamartPartition',
    datamart,
    (f) => [f.tenantId, f.datamartId],
    (f) => datamart.partition(f),
  ),
  goldenKey('datamart', datamart, (f) => [f.tenantId, f.datamartId]),
  golden(
    'datamartsIndex',
    datamart,
    (f) => [f.tenantId, f.datamartId],
    (f) => datamart.indexEntry(f),
  ),
  goldenValue('datamartStructurePrefix', collections.datamartStructure, collections.datamartStructure.keyPrefix),
  goldenKey('datamartTable', datamartTable, (f) => [f.tenantId, f.datamartId, f.tableId]),
  golden(
    'datamartOwner',
    datamartOwner,
    (f) => [f.tenantId, f.datamartId, f.userId],
    (f) => ({ ...datamartOwner.key(f), ...datamartOwner.indexEntry(f) }),
  ),
  golden(
    'ownerIndex',
    datamartOwner,
    (f) => [f.tenantId, f.userId],
    (f) => datamartOwner.indexes.gsi1.partition(f),
  ),
  golden(
    'datamartOwnersIndex',
    user,
    (f) => [f.tenantId, f.userId],
    (f) => user.indexEntry(f),
  ),
  golden(
    'datamartOwnersPartition',
    user,
    (f) => [f.tenantId],
    (f) => user.indexes.gsi1.partition(f),
  ),
  golden(
    'permission',
    permission,
    (f) => [f.tenantId, f.datamartId, f.subject, f.subjectId, f.tableId],
    (f) => ({ ...permission.key(f), ...permission.indexEntry(f) }),
  ),
  golden(
    'permissionIndex',
    permission,
    (f) => [f.tenantId, f.datamartId, f.subject, f.subjectId, f.tableId],
    (f) => permission.indexEntry(f),
  ),
  goldenOver(
    'permissionsPrefix',
    permission,
    leading(facetsOf(permission), ['subject', 'subjectId']),
    (f) => [f.subject, f.subjectId],
    (f) => permission.keyPrefix(f),
  ),
  golden(
    'tenantPermissionsPartition',
    permission,
    (f) => [f.tenantId],
    (f) => permission.indexes.gsi1.partition(f),
  ),
  goldenOver(
    'tenantPermissionsPrefix',
    permission,
    fc
      .tuple(facetsOf(permission), fc.boolean())
      .map(([f, withId]) => ({ subject: f.subject, subjectId: withId ? f.subjectId : undefined })),
    (f) => [f.subject, f.subjectId],
    (f) => permission.indexes.gsi1.keyPrefix(f),
  ),
  golden(
    'legacySubjectPermissionsIndex',
    permission,
    (f) => [f.tenantId, f.subject, f.subjectId],
    (f) => permission.legacyIndexes.gsi1.partition(f),
  ),
  goldenKey('schedule', schedule, (f) => [f.tenantId, f.scheduleId]),
  goldenValue('schedulesPrefix', schedule, schedule.keyPrefix({})),
  golden(
    'dueSchedulesIndex',
    schedule,
    (f) => [f.shard, f.nextFireAt, f.turn, f.tenantId, f.scheduleId],
    (f) => schedule.indexEntry(f),
  ),
  golden(
    'dueSchedulesShard',
    schedule,
    (f) => [f.shard],
    (f) => schedule.indexes.gsi1.partition(f),
  ),
  goldenKey('dispatchCursor', dispatchCursor, (f) => [f.shard]),
  goldenKey('dispatchShards', dispatchShards, () => []),
  goldenKey('scheduleRun', scheduleRun, (f) => [f.tenantId, f.scheduleId, f.slot]),
  golden(
    'scheduleRunsPrefix',
    scheduleRun,
    (f) => [f.scheduleId],
    (f) => scheduleRun.keyPrefix({ scheduleId: f.scheduleId }),
  ),
  goldenKey('tenantSettings', tenantSettings, (f) => [f.tenantId]),
  goldenKey('alert', alert, (f) => [f.tenantId, f.alertId]),
  goldenValue('alertsPrefix', alert, alert.keyPrefix({})),
  golden(
    'delivery',
    delivery,
    (f) => [f.tenantId, f.deliveryId, f.alertId],
    (f) => ({ ...delivery.key(f), ...delivery.indexEntry(f) }),
  ),
  goldenKey('deliveryKey', delivery, (f) => [f.tenantId, f.deliveryId]),
  golden(
    'alertDeliveriesIndex',
    delivery,
    (f) => [f.tenantId, f.alertId],
    (f) => delivery.indexes.gsi1.partition(f),
  ),
  goldenKey('deliveryBody', deliveryBody, (f) => [f.tenantId, f.deliveryId]),
  goldenKey('webhookEndpoint', webhookEndpoint, (f) => [f.tenantId]),
  goldenKey('webhookSlot', webhookSlot, (f) => [f.tenantId, f.slot]),
  goldenValue('webhookEndpointPrefix', collections.webhookEndpoint, collections.webhookEndpoint.keyPrefix),
  goldenKey('session', session, (f) => [f.sessionHash]),
  goldenKey('recordedLoad', recordedLoad, (f) => [f.tenantId, f.deduplicationId]),
  // keys.ts takes the shard count; the declaration, the shard the follow-up's owner falls on.
  goldenOver(
    'followUp',
    followUp,
    fc.record({ shards: fc.integer({ min: 1, max: 64 }), ownerId: ids, kind: anyText, subjectId: ids }),
    (f) => [f.shards, f.ownerId, f.kind, f.subjectId],
    ({ shards, ...f }) => followUp.key({ ...f, shard: f.ownerId % shards }),
  ),
  golden(
    'followUpShard',
    followUp,
    (f) => [f.shard],
    (f) => followUp.partition(f),
  ),
  goldenKey('idempotency', idempotency, (f) => [f.scope, f.keyHash]),
];

/** A key of any declared entity, with the entity. */
const anyKey = fc.oneof(
  ...declaredEntities.map((entity) =>
    facetsOf(entity).map((values) => ({ entity, key: (entity as AnyEntity).key(values as never) })),
  ),
);

/** The helpers keys.ts exports beside `keys`, each checked against the declarations. */
const helpers: Record<string, () => void> = {
  isIdempotencyRecord: () =>
    fc.assert(
      fc.property(
        fc.oneof(
          anyKey,
          fc.anything().map((pk) => ({ entity: undefined, key: { pk } })),
        ),
        ({ entity, key }) => {
          const declared = typeof key.pk === 'string' && key.pk.startsWith(idempotency.partitionPrefix({}));
          expect(isIdempotencyRecord(key.pk)).toBe(declared);
          if (entity) expect(declared).toBe(entity === idempotency);
        },
      ),
    ),
};

describe('each builder of keys.ts is a declaration, byte for byte', () => {
  test.each(cases.map((golden) => [golden.builder, golden] as const))('%s', (_builder, golden) => golden.check());
  test.each(Object.entries(helpers))('%s', (_helper, check) => check());
});

test('every builder and helper keys.ts exports is covered by a declaration', () => {
  const covered = cases.map(({ builder }) => builder);
  expect(
    Object.keys(keys).filter((builder) => !covered.includes(builder as Builder)),
    'builders no declaration covers',
  ).toEqual([]);
  expect(covered.filter((builder, index) => covered.indexOf(builder) !== index)).toEqual([]);
  const exported = Object.keys(keysModule).filter((name) => name !== 'keys');
  expect(
    exported.filter((helper) => !(helper in helpers)),
    'helpers no declaration covers',
  ).toEqual([]);
});

test('every declaration is named as declared and covers a builder of keys.ts', () => {
  for (const [name, entity] of Object.entries({ ...entities, ...collections })) expect(entity.name).toBe(name);
  const covers = new Set(cases.map((golden) => golden.covers));
  const uncovered = [...declaredEntities, ...Object.values(collections)].filter((declared) => !covers.has(declared));
  expect(uncovered.map(({ name }) => name)).toEqual([]);
});

test("the entities a declaration names (claims, counts, sweeps, index writers) are declared; a claim's key holds its attribute", () => {
  const declared = new Set(declaredEntities);
  for (const { name, declaration } of declaredEntities) {
    const named = [
      ...(declaration.unique ?? []).map(({ claim }) => claim),
      ...(declaration.count ? ['item' in declaration.count ? declaration.count.item : declaration.count.parent()] : []),
      ...(declaration.sweep?.leaves ?? []),
      ...Object.values(declaration.indexes ?? {}).flatMap(({ writtenBy }) => (writtenBy ? [writtenBy] : [])),
    ];
    expect(
      named.filter((entity) => !declared.has(entity)).map((entity) => entity.name),
      name,
    ).toEqual([]);
    for (const { attribute, claim } of declaration.unique ?? []) {
      expect(
        claim.facets.map((facet) => facet.name),
        `${name}.${attribute}`,
      ).toContain(attribute);
    }
  }
});

/**
 * The prefix rule. Within one key space (the table, or one index), key templates are grouped by
 * their partition template's shape: its literal text with each facet as `{}` (`TENANT#{}`), so
 * templates that could name the same partition fall in one group. In a group, for any two
 * different owners (an entity's key or index entry, or a collection), neither's sort key constant
 * prefix (its literal text before the first facet; all of it when it has none) starts with the
 * other's. Every sort key an owner writes and every prefix it queries with (`keyPrefix`, from no
 * facet on) starts with its constant prefix, so two constant prefixes that differ within the
 * shorter's length mean no Query of one owner's prefix can read the other's items. A collection's
 * members are not held to the rule against the collection (reading them together is its point).
 * Templates of different shapes are taken to name different partitions.
 */
interface Placement {
  owner: string;
  pk: KeyTemplate<never>;
  skPrefix: string;
  members?: readonly string[];
}

function prefixOverlaps(placements: readonly Placement[]): string[] {
  return placements.flatMap((one, index) =>
    placements
      .slice(index + 1)
      .filter(
        (other) =>
          other.pk.shape === one.pk.shape &&
          !one.members?.includes(other.owner) &&
          !other.members?.includes(one.owner) &&
          (one.skPrefix.startsWith(other.skPrefix) || other.skPrefix.startsWith(one.skPrefix)),
      )
      .map((other) => `${one.owner} (${one.skPrefix}) and ${other.owner} (${other.skPrefix}) in ${one.pk.shape}`),
  );
}

function placements(): Map<string, Placement[]> {
  const spaces = new Map<string, Placement[]>([['table', []]]);
  const place = (space: string, placement: Placement) => spaces.set(space, [...(spaces.get(space) ?? []), placement]);
  for (const { name, declaration } of declaredEntities) {
    place('table', { owner: name, pk: declaration.key.pk, skPrefix: declaration.key.sk.constantPrefix });
    for (const [indexes, label] of [
      [declaration.indexes, ''],
      [declaration.legacyIndexes, ' (legacy)'],
    ] as const) {
      for (const [index, { pk, sk }] of Object.entries(indexes ?? {})) {
        place(index, { owner: `${name}${label}`, pk, skPrefix: sk.constantPrefix });
      }
    }
  }
  for (const { name, members, pk, keyPrefix } of Object.values(collections)) {
    place('table', { owner: name, pk, skPrefix: keyPrefix, members: members.map((member) => member.name) });
  }
  return spaces;
}

test("no declared sort key prefix is a prefix of another entity's in the same partition", () => {
  const spaces = placements();
  expect([...spaces.keys()]).toEqual(['table', ...tableDefinition.globalIndexes.map(({ indexName }) => indexName)]);
  for (const [space, placed] of spaces) expect(prefixOverlaps(placed), space).toEqual([]);
});

/** What a template can render: its literal text, and for each facet what the facet's kind can write. */
function patternOf(template: KeyTemplate<never>): RegExp {
  const escape = (literal: string) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const written = template.facets.map((facet) => {
    if (facet.kind === 'decimal') return '\\d+';
    if (facet.kind === 'sortable') return '\\d{12,}';
    if (facet.kind === 'letter')
      return `(?:${Object.values(facet.letters ?? {})
        .map(escape)
        .join('|')})`;
    return '[\\s\\S]*';
  });
  const literals = template.shape.split('{}');
  return new RegExp(`^${literals.map((literal, index) => `${escape(literal)}${written[index] ?? ''}`).join('')}$`);
}

/** The partition keys a template renders from random facets. */
const partitionsOf = (template: KeyTemplate<never>) =>
  fc
    .record(Object.fromEntries(template.facets.map((facet) => [facet.name, arbitraryOf(facet)])))
    .map((values) => template.render(values as never));

test('partition templates of different shapes never name the same partition (what the prefix rule takes as given)', () => {
  for (const [space, placed] of placements()) {
    const templates = [...new Map(placed.map(({ pk }) => [pk.shape, pk])).values()];
    const rendered = fc.oneof(...templates.map((pk) => partitionsOf(pk).map((partition) => ({ pk, partition }))));
    fc.assert(
      fc.property(rendered, ({ pk, partition }) => {
        expect(patternOf(pk).test(partition), `${partition} as ${pk.shape}`).toBe(true);
        const alsoMatching = templates.filter((other) => other !== pk && patternOf(other).test(partition));
        expect(
          alsoMatching.map(({ shape }) => shape),
          `${space}: ${partition} (${pk.shape})`,
        ).toEqual([]);
      }),
      { numRuns: 2000 },
    );
  }
});

test('the prefix rule names two owners whose prefixes overlap in one partition, and no others', () => {
  const tenantPartition = agent.declaration.key.pk;
  const datamartPartition = datamart.declaration.key.pk;
  expect(
    prefixOverlaps([
      { owner: 'agent', pk: tenantPartition, skPrefix: 'AGENT#' },
      { owner: 'agentName', pk: tenantPartition, skPrefix: 'AGENT#NAME#' },
    ]),
  ).toEqual(['agent (AGENT#) and agentName (AGENT#NAME#) in TENANT#{}']);
  // In another partition, or read with it as a collection's member: no overlap.
  expect(
    prefixOverlaps([
      { owner: 'agent', pk: tenantPartition, skPrefix: 'AGENT#' },
      { owner: 'other', pk: datamartPartition, skPrefix: 'AGENT#' },
      { owner: 'agents', pk: tenantPartition, skPrefix: 'AG', members: ['agent'] },
    ]),
  ).toEqual([]);
});
