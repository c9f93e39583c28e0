/**
 * What an apply must refuse before it writes anything: a tenant's resources after an apply are
 * those it had, overwritten by the template's (matched by type and key) and joined by the new ones,
 * so a bundle valid alone can still combine with what other templates (or earlier versions of the
 * same one) left into a tenant that later operations refuse. Pure.
 *
 * What combining can and cannot do:
 * - references always resolve: a bundle refers only to keys it defines, which the apply writes,
 *   and nothing is ever removed; a key another template defined is overwritten (spec 4.4), its
 *   other users now referring to the new version, which is valid;
 * - a flow may read a table no flow writes (a source loaded some other way): no dependency;
 * - flows of different templates may form a dependency cycle, after which no reload, plan or
 *   schedule fire can order them: refused (409 `flow_cycle`);
 * - the tenant grows with every template applied, and each apply reads all its resources (each
 *   reload and schedule fire all its flows): bounded by `tenantLimits` (409 `resource_limit`).
 */
import { answerBytes } from '#functions/core/api/whole-list.ts';
import { conflict, type ServiceError } from '#functions/core/errors.ts';
import { flowCycleConflict, orderFlows, type TemplateBundle } from './bundle.ts';
import { computeChanges, type IdCounter, mergeResources, newIdsNeeded, type StoredResource } from './tenant-resources.ts';

/**
 * What a tenant may hold from its templates: flows, tables, resources of every kind, and their size
 * as an answer carries them (`resourceBytes`: at least what they take stored, and what GET /tenant,
 * which lists them, can grow to). Every apply reads all of them, every reload and
 * schedule fire all the flows, and DynamoDB Local reads some 2 to 5 MB a second on a busy machine, so
 * the size is the limit that matters; the counts keep many small resources in check. A template holds
 * at most 1,000 of each kind and 1,000,000 bytes of JSON (the bundle schema, the body limit: under
 * 2.5 MB as an answer carries them), so any one template fits in a new tenant.
 * test/integration/flow-limits.test.ts fills a tenant to these limits (5,000 flows, each of half of
 * them writing the 50 tables each of the other half reads) and
 * holds its apply of a 1,000-flow template and its reload to half the route time-out (15 s).
 */
export const tenantLimits = {
  flows: 5_000,
  tables: 5_000,
  resources: 10_000,
  bytes: 5_000_000,
} as const;

/** A limit for each kind `tenantLimits` names (tests pass smaller ones). */
export type TenantLimits = { readonly [Kind in keyof typeof tenantLimits]: number };

/** What the limits count, as the refusal names it. */
const described: Record<keyof TenantLimits, string> = {
  flows: 'flows',
  tables: 'tables',
  resources: 'template resources',
  bytes: 'bytes of template resources (as an answer carries them)',
};

/**
 * The refusal of applying `bundle` (version `version` of template `templateId`) over `current`, or
 * undefined when the tenant after it is one every later operation takes. A limit refuses only an
 * apply that takes the tenant past it and grows what it counts (one that does not, say to break a
 * cycle, goes through, whatever the tenant holds); a cycle refuses whenever the flows after the
 * apply hold one, new or not.
 */
export function applyRefusal(
  tenantId: number,
  template: { templateId: number; version: number },
  bundle: TemplateBundle,
  current: readonly StoredResource[],
  limits: TenantLimits = tenantLimits,
): ServiceError | undefined {
  // The tenant after the apply, exactly as the apply will write it but for the new ids (not taken yet:
  // counted as one digit each).
  const placeholders = Object.fromEntries(
    Object.entries(newIdsNeeded(bundle, current)).map(([counter, count]) => [counter, new Array<number>(count).fill(0)]),
  ) as Record<IdCounter, number[]>;
  const { changed } = computeChanges(tenantId, template, bundle, current, placeholders);
  const after = mergeResources(current, changed);
  const lead = `Template ${template.templateId} (version ${template.version}) was not applied, nothing was written:`;
  // The resources the apply leaves alone are the same objects before and after: each is sized once.
  const sizes = new WeakMap<StoredResource, number>();
  const sized = (resource: StoredResource) => {
    let size = sizes.get(resource);
    if (size === undefined) sizes.set(resource, (size = resourceBytes(resource)));
    return size;
  };
  return limitRefusal(lead, measure(current, sized), measure(after, sized), limits) ?? cycleRefusal(lead, after);
}

/** What the limits count in a tenant's resources. */
function measure(resources: readonly StoredResource[], sized: (resource: StoredResource) => number): TenantLimits {
  let flows = 0;
  let tables = 0;
  let bytes = 0;
  for (const resource of resources) {
    if (resource.type === 'flow') flows++;
    if (resource.type === 'table') tables++;
    bytes += sized(resource);
  }
  return { flows, tables, resources: resources.length, bytes };
}

/**
 * A resource's size as an answer carries it (answerBytes: its JSON, each quote and backslash escaped
 * once more in the Lambda result), its key attributes left out (a new resource has none yet). It is
 * at least the JSON its item stores, and at least what any answer listing it (GET /tenant) takes for it.
 */
export function resourceBytes(resource: StoredResource): number {
  const { pk: _pk, sk: _sk, ...attributes } = resource as StoredResource & { pk?: string; sk?: string };
  return answerBytes(attributes);
}

function limitRefusal(lead: string, before: TenantLimits, after: TenantLimits, limits: TenantLimits): ServiceError | undefined {
  const over = (Object.keys(limits) as (keyof TenantLimits)[]).filter(
    (kind) => after[kind] > limits[kind] && after[kind] > before[kind],
  );
  const [first] = over;
  if (first === undefined) return undefined;
  const describe = (kind: keyof TenantLimits) =>
    `the tenant would have ${after[kind]} ${described[kind]} (it has ${before[kind]}), and may have at most ${limits[kind]}`;
  return conflict(
    `${lead} ${describe(first)}`,
    'resource_limit',
    over.map((kind) => ({ location: 'body', pointer: '/templateId', message: describe(kind) })),
  );
}

function cycleRefusal(lead: string, after: readonly StoredResource[]): ServiceError | undefined {
  const flows = after.filter((resource) => resource.type === 'flow');
  const order = orderFlows(flows);
  if (!('cycles' in order)) return undefined;
  return flowCycleConflict(flows, order.cycles, { lead: `${lead} with the flows the tenant has, `, pointer: '/templateId' });
}
