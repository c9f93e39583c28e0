import { cpus, loadavg } from 'node:os';

export const fixed = (value: number, digits: number) => value.toFixed(digits);

/** When a section was measured and how busy the machine was: sections can be measured alone, at other times than the report's head. */
export const measuredAt = () =>
  `Measured ${new Date().toISOString()}, load average ${fixed(loadavg()[0] ?? 0, 2)} on ${cpus().length} CPUs.`;

export const ratio = (value: number, baseline: number) => `${(value / baseline).toFixed(2)}x`;

/** A Markdown table (the report is Markdown, readable as text too). */
export function markdownTable(headers: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>): string {
  const line = (cells: readonly (string | number)[]) =>
    `| ${cells.map((cell) => String(cell).replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}
