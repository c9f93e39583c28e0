/**
 * A template bundle (the body of POST /tenants/templates, schemas/template-bundle.schema.json) and
 * the checks its schema cannot express: unique keys, references that resolve, flows without
 * dependency cycles. Pure: the same code serves publishing and, for the flow order, reloads.
 */
import type { Column, Flow, TemplateBundleBody } from '#functions/core/api/validators/template-bundle.cjs';
import { conflict, type FieldError, type ServiceError } from '#functions/core/errors.ts';
import { type OrderableFlow, orderFlows } from './flow-order.ts';

export { type OrderableFlow, orderFlows } from './flow-order.ts';

export type TemplateBundle = TemplateBundleBody;
export type BundleFlow = Flow;

/** Every problem of an already schema-valid bundle, as body errors; empty when it can be published. */
export function checkBundle(bundle: TemplateBundle): FieldError[] {
  return [...duplicateErrors(bundle), ...referenceErrors(bundle), ...cycleErrors(bundle.flows ?? [])];
}

/**
 * The flows in an order where each comes after the flows that write the tables it reads. Among
 * flows free to run, input order is kept, so the same flows always load in the same order. Linear
 * in the flows' reads plus writes (flow-order.ts). When the flows form a dependency cycle no such
 * order exists: 409 `flow_cycle` naming each cycle (a tenant's flows can hold one only from before
 * applies checked them, or for a moment while an apply writes, or after one that stopped half-way).
 */
export function flowDependencyOrder<T extends OrderableFlow>(flows: readonly T[]): T[] {
  const order = orderFlows(flows);
  if ('cycles' in order) throw flowCycleConflict(flows, order.cycles);
  return order.ordered;
}

/** 409 `flow_cycle`: the flows cannot be put in dependency order; `errors` names every cycle, at `pointer`. */
export function flowCycleConflict(
  flows: readonly OrderableFlow[],
  cycles: readonly (readonly number[])[],
  { lead = '', pointer = '' }: { lead?: string; pointer?: string } = {},
): ServiceError {
  const messages = cycles.map((cycle) => cycleMessage(flows, cycle));
  const more = messages.length > 1 ? ` (and ${messages.length - 1} more cycle${messages.length > 2 ? 's' : ''})` : '';
  return conflict(
    `${lead}${messages[0] ?? 'flows form a dependency cycle'}${more}; no order of these flows runs each after the flows whose tables it reads, so an apply must change one of them`,
    'flow_cycle',
    messages.map((message) => ({ location: 'body', pointer, message })),
  );
}

// ---- duplicates -------------------------------------------------------------------------------

const at = (pointer: string, message: string): FieldError => ({ location: 'body', pointer, message });

const resourceTypes = ['desks', 'tables', 'connections', 'flows', 'applications', 'dashboards'] as const;

function duplicateErrors(bundle: TemplateBundle): FieldError[] {
  const errors = resourceTypes.flatMap((type) => duplicateKeyErrors(bundle[type] ?? [], `/${type}`));
  (bundle.tables ?? []).forEach((table, index) =>
    errors.push(...duplicateColumnErrors(table.columns, `/tables/${index}/columns`)),
  );
  (bundle.dashboards ?? []).forEach((dashboard, index) =>
    errors.push(...duplicateKeyErrors(dashboard.widgets, `/dashboards/${index}/widgets`)),
  );
  return errors;
}

function duplicateKeyErrors(items: readonly { key: string }[], pointer: string): FieldError[] {
  const firstIndexByKey = new Map<string, number>();
  const errors: FieldError[] = [];
  items.forEach(({ key }, index) => {
    const first = firstIndexByKey.get(key);
    if (first === undefined) firstIndexByKey.set(key, index);
    else errors.push(at(`${pointer}/${index}/key`, `duplicates the key "${key}" (first at ${pointer}/${first})`));
  });
  return errors;
}

/**
 * Column names are compared ignoring case: most databases fold unquoted identifiers (PostgreSQL to
 * lower case, SQL Server compares them case-insensitively), so `Id` and `id` would be one column.
 */
function duplicateColumnErrors(columns: readonly Column[], pointer: string): FieldError[] {
  const firstIndexByName = new Map<string, number>();
  const errors: FieldError[] = [];
  columns.forEach(({ column_name: name }, index) => {
    const folded = name.toLowerCase();
    const first = firstIndexByName.get(folded);
    if (first === undefined) firstIndexByName.set(folded, index);
    else errors.push(at(`${pointer}/${index}/column_name`, `duplicates the column "${name}" (first at ${pointer}/${first})`));
  });
  return errors;
}

// ---- references -------------------------------------------------------------------------------

function referenceErrors(bundle: TemplateBundle): FieldError[] {
  const keysOf = (items: readonly { key: string }[] = []) => new Set(items.map(({ key }) => key));
  const desks = keysOf(bundle.desks);
  const tables = keysOf(bundle.tables);
  const connections = keysOf(bundle.connections);
  const applications = keysOf(bundle.applications);
  const errors: FieldError[] = [];
  const check = (defined: Set<string>, kind: string, key: string | undefined, pointer: string) => {
    if (key !== undefined && !defined.has(key)) {
      errors.push(at(pointer, `refers to ${kind} "${key}", which this template does not define`));
    }
  };
  (bundle.tables ?? []).forEach((table, index) => check(desks, 'desk', table.desk, `/tables/${index}/desk`));
  (bundle.flows ?? []).forEach((flow, index) => {
    check(connections, 'connection', flow.connection, `/flows/${index}/connection`);
    (flow.reads ?? []).forEach((table, position) => check(tables, 'table', table, `/flows/${index}/reads/${position}`));
    flow.writes.forEach((table, position) => check(tables, 'table', table, `/flows/${index}/writes/${position}`));
  });
  (bundle.dashboards ?? []).forEach((dashboard, index) => {
    check(applications, 'application', dashboard.application, `/dashboards/${index}/application`);
    dashboard.widgets.forEach((widget, position) =>
      check(tables, 'table', widget.table, `/dashboards/${index}/widgets/${position}/table`),
    );
  });
  return errors;
}

// ---- flow dependencies ------------------------------------------------------------------------

function cycleErrors(flows: readonly BundleFlow[]): FieldError[] {
  const order = orderFlows(flows);
  return 'cycles' in order ? order.cycles.map((cycle) => at(`/flows/${cycle[0]}`, cycleMessage(flows, cycle))) : [];
}

/** `flows form a dependency cycle: a → b → a`, the cycle given as positions in `flows`. */
export const cycleMessage = (flows: readonly OrderableFlow[], cycle: readonly number[]) =>
  `flows form a dependency cycle: ${[...cycle, cycle[0]].map((index) => flows[index as number]?.key).join(' → ')}`;
