/**
 * The read budget and the write table (bench/read-budget.ts, bench/write-costs.ts) as `npm run
 * bench` runs them, and alone: `npm run bench -- reads` or `-- writes` measures one of them on a
 * twin of its own and rewrites only its section of bench/results.md and its rows of the Budgets
 * table.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { startTwin } from '#local/twin.ts';
import {
  measureReadBudget,
  readBudgetHeading,
  readBudgetRows,
  readBudgetSection,
  type ReadBudgetSettings,
} from './read-budget.ts';
import { markdownTable } from './table.ts';
import { measureWrites, writeBudgetRows, writeSection, writesHeading } from './write-costs.ts';

function positiveInteger(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer, not "${raw}"`);
  return value;
}

export const readBudgetSettings: ReadBudgetSettings = {
  requests: positiveInteger('BENCH_READ_REQUESTS', 400),
  warmup: positiveInteger('BENCH_READ_WARMUP', 300),
};

/** A row of the Budgets table: what is checked, whether it passes, what fails. */
export type BudgetRow = [budget: string, passes: boolean, failing: string];

export const budgetCells = ([budget, passes, failing]: BudgetRow) => [budget, passes ? 'pass' : '**FAIL**', failing];

/** The markdown with the section under `heading` (up to the next `## `) replaced, or appended. */
function replaceSection(markdown: string, heading: string, section: string): string {
  const start = markdown.indexOf(`${heading}\n`);
  if (start === -1) return `${markdown.trimEnd()}\n\n${section}\n`;
  const end = markdown.indexOf('\n## ', start + heading.length);
  return `${markdown.slice(0, start)}${section}\n${end === -1 ? '' : markdown.slice(end)}`;
}

/** The Budgets table with these rows in place of the ones checking the same things (matched by their first cell), or added. */
function replaceBudgetRows(markdown: string, rows: readonly BudgetRow[]): string {
  const lines = markdown.split('\n');
  for (const row of rows) {
    const line = markdownTable(['', '', ''], [budgetCells(row)]).split('\n')[2] as string;
    const cell = line.split(' | ')[0] as string;
    const at = lines.findIndex((candidate) => candidate.startsWith(`${cell} |`));
    if (at !== -1) {
      lines[at] = line;
      continue;
    }
    const heading = lines.indexOf('## Budgets');
    const tableEnd = lines.findIndex((candidate, index) => index > heading + 2 && candidate.trim() === '');
    lines.splice(tableEnd === -1 ? lines.length : tableEnd, 0, line);
  }
  return lines.join('\n');
}

/** `npm run bench -- reads` / `-- writes`: measures that section on a twin of its own and rewrites it in `reportFile`. */
export async function rewriteBudgetSection(which: 'reads' | 'writes', reportFile: string): Promise<void> {
  const progress = (message: string) => process.stderr.write(`${message}\n`);
  const twin = await startTwin({ port: 0, clock: false });
  let section: string;
  let heading: string;
  let budget: BudgetRow[];
  try {
    if (which === 'reads') {
      const { rows } = await measureReadBudget(twin, readBudgetSettings, progress);
      [section, heading, budget] = [readBudgetSection(rows, readBudgetSettings), readBudgetHeading, readBudgetRows(rows)];
    } else {
      const rows = await measureWrites(twin, undefined, progress);
      [section, heading, budget] = [writeSection(rows), writesHeading, writeBudgetRows(rows)];
    }
  } finally {
    await twin.stop();
  }
  console.log(`\n${section}\n`);
  const markdown = await readFile(reportFile, 'utf8');
  await writeFile(reportFile, replaceBudgetRows(replaceSection(markdown, heading, section), budget));
}
