/** Functions re-read a keyring this often, and sooner when they meet an unknown key id (see `find`). */
const keyringCacheMs = 5 * 60 * 1000;
/** An id that a fresh read of the keyring did not have is refused without reading it again for this long. */
const unknownIdMemoryMs = 60 * 1000;
/** At most this many such ids are remembered (the oldest are forgotten first). */
const maxRememberedUnknownIds = 1000;
/** Whatever the ids, an unknown one makes the function re-read the keyring at most this often. */
const minKeyringRereadMs = 5 * 1000;

/** Thrown by `find` when it could not re-read the keyring to tell whether an unknown id is one. */
export class KeyringUnsure extends Error {}

/**
 * A keyring (signing keys, token MAC keys) as a function holds it: read once, kept for a few
 * minutes, and read again early when a credential names a key the cached copy lacks, since that key
 * may have been rotated in since. Reading again costs a remote call on AWS (Secrets Manager), so it
 * is not done for anyone who sends made-up ids: an id that a fresh read did not have is refused
 * without another read for a minute, and however many different ids arrive, the keyring is re-read
 * at most once per `minKeyringRereadMs`. A key rotated in during such a pause is refused until it
 * ends (a few seconds).
 */
export class KeyringCache<K> {
  private cached: { keyring: K; loadedAt: number } | undefined;
  /** Unknown id → until when (epoch ms) it is refused without a read. Insertion order is age order. */
  private readonly unknownIds = new Map<string, number>();
  private lastReread = Number.NEGATIVE_INFINITY;

  /**
   * @param load reads the keyring from where it lives.
   * @param maxIdLength a longer id is none of ours, and is neither read for nor remembered.
   */
  constructor(
    private readonly load: () => Promise<K>,
    private readonly maxIdLength: number,
  ) {}

  /** The keyring, cached for a few minutes per cold start; `refresh` forces a read. */
  async current(options: { refresh?: boolean } = {}): Promise<K> {
    if (!this.cached || options.refresh || Date.now() - this.cached.loadedAt > keyringCacheMs) {
      this.cached = { keyring: await this.load(), loadedAt: Date.now() };
    }
    return this.cached.keyring;
  }

  /**
   * What `pick` finds for `id` in the keyring, read again (within the limits above) when the cached copy
   * has nothing. `unsure: 'throw'`: when the limits kept a re-read from happening for an id no fresh read
   * has refused, throw `KeyringUnsure` rather than answer undefined (for a caller that caches refusals).
   */
  async find<T>(
    id: string | undefined,
    pick: (keyring: K) => T | undefined,
    options: { unsure?: 'undefined' | 'throw' } = {},
  ): Promise<T | undefined> {
    const known = pick(await this.current());
    if (known !== undefined || id === undefined || id.length > this.maxIdLength) return known;
    const now = Date.now();
    if ((this.unknownIds.get(id) ?? 0) > now) return undefined;
    if (now - this.lastReread < minKeyringRereadMs) {
      if (options.unsure === 'throw') throw new KeyringUnsure(`Not re-read for an unknown id within ${minKeyringRereadMs} ms`);
      return undefined;
    }
    this.lastReread = now;
    const reread = pick(await this.current({ refresh: true }));
    if (reread === undefined) this.rememberUnknown(id, now);
    return reread;
  }

  private rememberUnknown(id: string, now: number): void {
    this.unknownIds.delete(id);
    this.unknownIds.set(id, now + unknownIdMemoryMs);
    for (const [oldest, until] of this.unknownIds) {
      if (this.unknownIds.size <= maxRememberedUnknownIds && until > now) break;
      this.unknownIds.delete(oldest);
    }
  }
}
