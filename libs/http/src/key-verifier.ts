import { bearerToken, KairosError, parseApiKey, type Principal } from '@kairos/core';
import { findApiKey, principalOf, type Pool, type StoredKey } from '@kairos/db';
import { LRUCache } from 'lru-cache';

export interface KeyVerifierOptions {
  readonly pool: Pool;
  /**
   * How long a key read from PostgreSQL is trusted before it is read again: a revocation made
   * through another API instance takes effect within this time (at once on the instance that
   * revoked it). Default: 5,000 ms.
   */
  readonly cacheMs?: number;
  /** Keys held at most (unknown ids included, so a flood of made-up ids stays bounded). Default: 10,000. */
  readonly cacheSize?: number;
  readonly now?: () => Date;
}

/** A cache entry: the stored key, or null for an id with no key. */
type Cached = { readonly stored: StoredKey | null };

/**
 * Resolves `Authorization: Bearer kairos_…` to a principal. One PostgreSQL read per key per
 * cacheMs, not per request: the API's hot path does not wait on it. Expiry and revocation are
 * checked against the clock at every request, so a cached key still dies on time.
 */
export class KeyVerifier {
  readonly #o: KeyVerifierOptions;
  readonly #cache: LRUCache<string, Cached>;

  constructor(options: KeyVerifierOptions) {
    this.#o = options;
    this.#cache = new LRUCache<string, Cached>({
      max: options.cacheSize ?? 10_000,
      ttl: options.cacheMs ?? 5_000,
      fetchMethod: async (id) => ({ stored: (await findApiKey(options.pool, id)) ?? null }),
    });
  }

  /** The principal of the request's Authorization header; UNAUTHENTICATED for anything else. */
  async verify(authorization: unknown): Promise<Principal> {
    const token = bearerToken(authorization);
    if (token === undefined) {
      throw new KairosError('UNAUTHENTICATED', 'an API key is required: Authorization: Bearer kairos_…');
    }
    const parts = parseApiKey(token);
    const cached = parts && (await this.#cache.fetch(parts.id));
    const principal =
      parts && cached?.stored ? principalOf(cached.stored, parts.secret, this.#now()) : undefined;
    // Unknown, wrong secret, revoked and expired look alike: no hint for a guesser.
    if (!principal)
      throw new KairosError('UNAUTHENTICATED', 'the API key is not valid (unknown, revoked or expired)');
    return principal;
  }

  /** Drops a key from this instance's cache (after revoking it here). */
  forget(id: string): void {
    this.#cache.delete(id);
  }

  #now(): Date {
    return this.#o.now?.() ?? new Date();
  }
}
