/**
 * What the generated parts of the docs share (tools/entity-docs.ts, tools/template-docs.ts): Markdown
 * tables of cells that are already Markdown, code spans, and the blocks between a marker comment and
 * the end marker that `npm run generate` rewrites.
 */

/** Where every generated block ends. */
export const endMarker = '<!-- end generated -->';

export const code = (text: string) => `\`${text}\``;

const row = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;

/** A Markdown table; each cell is Markdown already (`code` spans, escaped prose). */
export const table = (header: readonly string[], rows: readonly string[][]) =>
  [row(header), row(header.map(() => '---')), ...rows.map(row)].join('\n');

/** `a`, `a or b`, `a, b or c`. */
export const listed = (words: readonly string[]) =>
  words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words[words.length - 1]}`;

/** `document` (the file `file`) with the text after `marker`, up to the end marker, made `block`. */
export function replaceBlock(document: string, marker: string, block: string, file: string): string {
  const start = document.indexOf(marker);
  const end = document.indexOf(endMarker, start);
  if (start === -1 || end === -1 || document.indexOf(marker, start + marker.length) !== -1) {
    throw new Error(`${file} needs one ${marker}, followed by ${endMarker}`);
  }
  return `${document.slice(0, start + marker.length)}\n\n${block}\n${document.slice(end)}`;
}
