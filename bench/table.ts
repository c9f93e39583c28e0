export const fixed = (value: number, digits: number) => value.toFixed(digits);

export const ratio = (value: number, baseline: number) => `${(value / baseline).toFixed(2)}x`;

/** A Markdown table (the report is Markdown, readable as text too). */
export function markdownTable(headers: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>): string {
  const line = (cells: readonly (string | number)[]) =>
    `| ${cells.map((cell) => String(cell).replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(headers), line(headers.map(() => '---')), ...rows.map(line)].join('\n');
}
