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

/** A token that matched its stored digest, and until when that answer stands. */
interface Verified {
  readonly principal: Principal;
  /** The first instant the key is no longer valid (expiry or revocation), or Infinity. */
  readonly endsAt: number;
}

/**
 * Resolves `Authorization: Bearer kairos_…` to a principal. One PostgreSQL read per key per
 * cacheMs, not per request: the API's hot path does not wait on it. Expiry and revocation are
 * checked against the clock at every request, so a cached key still dies on time.
 */
export class KeyVerifier {
  readonly #o: KeyVerifierOptions;
  readonly #cache: LRUCache<string, Cached>;
  /**
   * Tokens already matched against their digest, for as long as the key itself is trusted: a
   * known caller is answered synchronously, with no hash and no promise (the profile of W1 showed
   * both on every request).
   */
  readonly #verified: LRUCache<string, Verified>;
  readonly #ttl: number;

  constructor(options: KeyVerifierOptions) {
    this.#o = options;
    const ttl = options.cacheMs ?? 5_000;
    this.#ttl = ttl;
    const max = options.cacheSize ?? 10_000;
    this.#cache = new LRUCache<string, Cached>({
      max,
      ttl: Math.max(ttl, 1),
      fetchMethod: async (id) => ({ stored: (await findApiKey(options.pool, id)) ?? null }),
    });
    this.#verified = new LRUCache<string, Verified>({ max, ttl: Math.max(ttl, 1) });
  }

  /** The principal of a token verified within cacheMs and still valid now; undefined otherwise. */
  known(authorization: unknown): Principal | undefined {
    if (typeof authorization !== 'string' || this.#ttl === 0) return undefined;
    const hit = this.#verified.get(authorization);
    return hit && this.#now().getTime() < hit.endsAt ? hit.principal : undefined;
  }

  /** The principal of the request's Authorization header; UNAUTHENTICATED for anything else. */
  async verify(authorization: unknown): Promise<Principal> {
    const known = this.known(authorization);
    if (known) return known;
    const token = bearerToken(authorization);
    if (token === undefined) {
      throw new KairosError('UNAUTHENTICATED', 'an API key is required: Authorization: Bearer kairos_…');
    }
    const parts = parseApiKey(token);
    // cacheMs 0: every request reads the key (lru-cache would take a ttl of 0 as "forever").
    const cached =
      parts &&
      (this.#ttl === 0
        ? { stored: (await findApiKey(this.#o.pool, parts.id)) ?? null }
        : await this.#cache.fetch(parts.id));
    const principal =
      parts && cached?.stored ? principalOf(cached.stored, parts.secret, this.#now()) : undefined;
    // Unknown, wrong secret, revoked and expired look alike: no hint for a guesser.
    if (!principal)
      throw new KairosError('UNAUTHENTICATED', 'the API key is not valid (unknown, revoked or expired)');
    // Trusted no longer than the stored key it was checked against, so a revocation elsewhere
    // still lands within cacheMs.
    const ttl = parts && this.#ttl > 0 ? this.#cache.getRemainingTTL(parts.id) : 0;
    if (typeof authorization === 'string' && cached?.stored && ttl > 0) {
      this.#verified.set(authorization, { principal, endsAt: endOf(cached.stored) }, { ttl });
    }
    return principal;
  }

  /** Drops a key from this instance's caches (after revoking it here). */
  forget(id: string): void {
    this.#cache.delete(id);
    for (const [token, v] of this.#verified.entries()) {
      if (v.principal.keyId === id) this.#verified.delete(token);
    }
  }

  #now(): Date {
    return this.#o.now?.() ?? new Date();
  }
}

function endOf({ row }: StoredKey): number {
  return Math.min(row.expiresAt?.getTime() ?? Infinity, row.revokedAt?.getTime() ?? Infinity);
}
