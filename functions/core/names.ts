/**
 * Text as a reader sees it, for comparing what must be unique: compatibility forms folded (NFKC:
 * `ﬁ` is `fi`, full-width letters are ASCII), characters that show nothing dropped (zero-width
 * joiners, variation selectors, fillers such as U+3164, the Braille blank), and case folded in full
 * (upper- then lower-casing: `ß` is `ss`, final `ς` is `σ`, long `ſ` and dotless `ı` fold with `s`
 * and `i`), then NFKC again for what the case mapping decomposed. Stored values keep their spelling;
 * only their keys are folded.
 */
export const foldedText = (text: string) =>
  text.normalize('NFKC').replace(invisible, '').toUpperCase().toLowerCase().normalize('NFKC');

/** Default-ignorable code points (they render as nothing) and blanks that are not white space. */
const invisible = /[\p{Default_Ignorable_Code_Point}\u2800]/gu;

/**
 * How two names compare where one must be unique (a template's `nome` among a client's templates):
 * folded as `foldedText` does, and runs of spaces collapsed, so that names a reader could not tell
 * apart cannot both exist.
 */
export const nameKey = (nome: string) => foldedText(nome).replace(/\s+/g, ' ').trim();
