/**
 * The resources a template puts in a tenant, and the pure computation of what applying a bundle
 * changes. Resources are matched by type and key; ids never change once given; nothing absent
 * from the bundle is removed.
 */
import type { Column, Connection, Widget } from '#functions/core/api/validators/template-bundle.cjs';
import type { TemplateBundle } from './bundle.ts';

export const resourceTypes = ['desk', 'table', 'connection', 'flow', 'application', 'dashboard'] as const;
export type ResourceType = (typeof resourceTypes)[number];
/** Counters of tenant-scoped ids: one per resource type, plus columns and widgets. */
export const idCounters = [...resourceTypes, 'column', 'widget'] as const;
export type IdCounter = (typeof idCounters)[number];

interface ResourceBase {
  tenantId: number;
  id: number;
  key: string;
  nome: string;
  templateId: number;
  /** The template version in which this resource last changed. */
  changedInVersion: number;
}

export type StoredColumn = Column & { id: number };

export type StoredWidget = Omit<Widget, 'table'> & { id: number; tableKey?: string };

export type StoredResource =
  | (ResourceBase & { type: 'desk' })
  | (ResourceBase & { type: 'table'; deskKey: string; columns: StoredColumn[] })
  | (ResourceBase & { type: 'connection'; kind: string; agent: string; properties: NonNullable<Connection['properties']> })
  | (ResourceBase & { type: 'flow'; connectionKey: string; reads: string[]; writes: string[]; context: string })
  | (ResourceBase & { type: 'application'; route: string })
  | (ResourceBase & { type: 'dashboard'; applicationKey?: string; widgets: StoredWidget[] });

export type StoredOf<T extends ResourceType> = Extract<StoredResource, { type: T }>;

export const defaultAgentSlot = 'default';

/** Current resources by type and key. */
function indexByKey(current: readonly StoredResource[]) {
  const index = new Map<string, StoredResource>();
  for (const resource of current) index.set(`${resource.type}:${resource.key}`, resource);
  return {
    find: <T extends ResourceType>(type: T, key: string) => index.get(`${type}:${key}`) as StoredOf<T> | undefined,
  };
}

/** How many new ids of each counter applying `bundle` over `current` needs. */
export function newIdsNeeded(bundle: TemplateBundle, current: readonly StoredResource[]): Record<IdCounter, number> {
  const existing = indexByKey(current);
  const needs = Object.fromEntries(idCounters.map((counter) => [counter, 0])) as Record<IdCounter, number>;
  const count = (type: ResourceType, list: readonly { key: string }[] | undefined) => {
    for (const item of list ?? []) if (!existing.find(type, item.key)) needs[type]++;
  };
  count('desk', bundle.desks);
  count('table', bundle.tables);
  count('connection', bundle.connections);
  count('flow', bundle.flows);
  count('application', bundle.applications);
  count('dashboard', bundle.dashboards);
  for (const table of bundle.tables ?? []) {
    const known = new Set(existing.find('table', table.key)?.columns.map((column) => column.column_name));
    needs.column += table.columns.filter((column) => !known.has(column.column_name)).length;
  }
  for (const dashboard of bundle.dashboards ?? []) {
    const known = new Set(existing.find('dashboard', dashboard.key)?.widgets.map((widget) => widget.key));
    needs.widget += dashboard.widgets.filter((widget) => !known.has(widget.key)).length;
  }
  return needs;
}

/**
 * Keys of the tables applying `bundle` over `current` creates or rebuilds (their columns' names or
 * types change): they need a reload. Known before any id is given, so the apply records them with
 * its lock.
 */
export function tablesToReload(bundle: TemplateBundle, current: readonly StoredResource[]): string[] {
  const existing = indexByKey(current);
  return (bundle.tables ?? []).flatMap((table) => {
    const before = existing.find('table', table.key);
    return !before || structureOf(before.columns) !== structureOf(table.columns) ? [table.key] : [];
  });
}

export interface ApplyChanges {
  /** Resources that are new or differ from what the tenant has: the writes to make. */
  changed: StoredResource[];
  /** Keys of tables created or rebuilt (their columns' names or types changed): they need a reload. */
  createdOrRebuiltTables: string[];
}

/**
 * What the tenant should hold after applying `bundle` (version `version` of `templateId`), given
 * what it holds now and fresh ids (as many as `newIdsNeeded` asked for, consumed in order).
 */
export function computeChanges(
  tenantId: number,
  template: { templateId: number; version: number },
  bundle: TemplateBundle,
  current: readonly StoredResource[],
  freshIds: Record<IdCounter, number[]>,
): ApplyChanges {
  const existing = indexByKey(current);
  const takeId = (counter: IdCounter) => {
    const id = freshIds[counter].shift();
    if (id === undefined) throw new Error(`Not enough fresh ${counter} ids were allocated`);
    return id;
  };
  const changed: StoredResource[] = [];
  const base = (type: ResourceType, key: string, nome: string) => ({
    tenantId,
    id: existing.find(type, key)?.id ?? takeId(type),
    key,
    nome,
    templateId: template.templateId,
    changedInVersion: template.version,
  });
  const keep = (resource: StoredResource) => {
    const before = existing.find(resource.type, resource.key);
    if (!before || !sameContent(before, resource)) changed.push(resource);
  };

  for (const desk of bundle.desks ?? []) keep({ type: 'desk', ...base('desk', desk.key, desk.nome) });
  for (const table of bundle.tables ?? []) {
    const before = existing.find('table', table.key);
    const columnIds = new Map(before?.columns.map((column) => [column.column_name, column.id]));
    const columns = table.columns.map((column) => ({ id: columnIds.get(column.column_name) ?? takeId('column'), ...column }));
    keep({ type: 'table', ...base('table', table.key, table.nome), deskKey: table.desk, columns });
  }
  for (const connection of bundle.connections ?? []) {
    keep({
      type: 'connection',
      ...base('connection', connection.key, connection.nome),
      kind: connection.kind,
      agent: connection.agent ?? defaultAgentSlot,
      properties: connection.properties ?? {},
    });
  }
  for (const flow of bundle.flows ?? []) {
    keep({
      type: 'flow',
      ...base('flow', flow.key, flow.nome),
      connectionKey: flow.connection,
      reads: flow.reads ?? [],
      writes: flow.writes,
      context: flow.context,
    });
  }
  for (const application of bundle.applications ?? []) {
    keep({ type: 'application', ...base('application', application.key, application.nome), route: application.route });
  }
  for (const dashboard of bundle.dashboards ?? []) {
    const widgetIds = new Map(existing.find('dashboard', dashboard.key)?.widgets.map((widget) => [widget.key, widget.id]));
    const widgets = dashboard.widgets.map(({ table, ...widget }) => ({
      id: widgetIds.get(widget.key) ?? takeId('widget'),
      ...widget,
      ...(table === undefined ? {} : { tableKey: table }),
    }));
    keep({
      type: 'dashboard',
      ...base('dashboard', dashboard.key, dashboard.nome),
      ...(dashboard.application === undefined ? {} : { applicationKey: dashboard.application }),
      widgets,
    });
  }
  return { changed, createdOrRebuiltTables: tablesToReload(bundle, current) };
}

/**
 * The tenant's resources once `changed` is written over `current`: each changed resource in the place
 * of the one it overwrites (same type and key), the new ones after, in their order.
 */
export function mergeResources(current: readonly StoredResource[], changed: readonly StoredResource[]): StoredResource[] {
  const byKey = new Map(current.map((resource) => [`${resource.type}:${resource.key}`, resource]));
  for (const resource of changed) byKey.set(`${resource.type}:${resource.key}`, resource);
  return [...byKey.values()];
}

/** A table's physical structure: column names and types in order (labels are presentation only). */
const structureOf = (columns: readonly Pick<StoredColumn, 'column_name' | 'data_type'>[]) =>
  JSON.stringify(columns.map((column) => [column.column_name, column.data_type]));

/** Equal apart from bookkeeping: an unchanged resource is not rewritten, and keeps its changedInVersion. */
function sameContent(before: StoredResource, after: StoredResource): boolean {
  return canonical({ ...before, changedInVersion: 0 }) === canonical({ ...after, changedInVersion: 0 });
}

/** JSON with object keys sorted and the table's own key attributes left out. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== 'object' || Array.isArray(inner)) return inner;
    const entries = Object.entries(inner as Record<string, unknown>).filter(
      ([name]) => !['pk', 'sk', 'gsi1pk', 'gsi1sk'].includes(name),
    );
    return Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)));
  });
}
