/**
 * How two names compare where one must be unique (a template's `nome` among a client's templates):
 * compatibility forms folded (NFKC: `ﬁ` is `fi`, full-width letters are ASCII), case folded, and runs
 * of spaces collapsed, so that names a reader could not tell apart cannot both exist.
 */
export const nameKey = (nome: string) => nome.normalize('NFKC').toLowerCase().replace(/\s+/g, ' ').trim();
