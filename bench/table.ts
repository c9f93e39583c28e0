/** Plain-text tables for the terminal: text columns left-aligned, numbers right-aligned. */
export function formatTable(headers: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>): string {
  const cells = rows.map((row) => row.map(String));
  const numeric = headers.map((_, column) => rows.every((row) => typeof row[column] === 'number' || isNumberLike(row[column])));
  const widths = headers.map((header, column) => Math.max(header.length, ...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) => (numeric[column] ? cell.padStart(widths[column] ?? 0) : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), line(widths.map((width) => '-'.repeat(width))), ...cells.map(line)].join('\n');
}

/** "1.18x" or "12.3" count as numbers for alignment. */
function isNumberLike(cell: string | number | undefined): boolean {
  return typeof cell === 'string' && /^[0-9.,]+x?$/.test(cell);
}

export const fixed = (value: number, digits: number) => value.toFixed(digits);

export const ratio = (value: number, baseline: number) => `${(value / baseline).toFixed(2)}x`;
