/** How concurrent writes are grouped into shared transactions (group commit). */
export interface GroupCommitOptions {
  /**
   * Longest a write waits for others to join its transaction, in whole ms. Default: 2. 0 turns
   * grouping off: every write is its own transaction, at once. A group is written sooner when it
   * is full, or when no other group is being written (waiting would only add latency then).
   */
  readonly maxWaitMs?: number;
  /** Most members in one transaction. Default: 100. */
  readonly maxSize?: number;
}

export const DEFAULT_GROUP_COMMIT = { maxWaitMs: 2, maxSize: 100 } as const;

/** Longest wait and largest group accepted. */
const MAX_WAIT_MS = 1000;
const MAX_SIZE = 1000;

export interface GroupCommitStats {
  /** Writes attempted: groups, single members and members retried alone. */
  readonly writes: number;
  /** Members that went through the grouper. */
  readonly members: number;
  /** Members retried alone after their group's write failed. */
  readonly retriedAlone: number;
}

interface Member<T, R> {
  readonly item: T;
  readonly resolve: (result: R) => void;
  readonly reject: (err: unknown) => void;
}

export interface GroupCommitDeps<T, R> {
  /** Writes items in one transaction, answering each in order; a throw means nothing was written. */
  readonly write: (items: readonly T[]) => Promise<readonly R[]>;
  /**
   * A failure every member shares (the connection was lost): reported to each as it is. Any other
   * failure of a group may be one member's doing, so each member is then written alone.
   */
  readonly sharedFailure: (err: unknown) => boolean;
}

/**
 * Group commit: collects concurrent items and writes them in one transaction, each caller getting
 * its own answer or error. Pure timing logic; the write is the caller's.
 */
export class GroupCommit<T, R> {
  readonly #deps: GroupCommitDeps<T, R>;
  readonly #maxWaitMs: number;
  readonly #maxSize: number;
  #pending: Member<T, R>[] = [];
  #timer: NodeJS.Timeout | undefined;
  #immediate: NodeJS.Immediate | undefined;
  #inFlight = 0;
  #stats = { writes: 0, members: 0, retriedAlone: 0 };

  /** `label` names the options in errors (`createGroup.maxWaitMs must be …`). */
  constructor(deps: GroupCommitDeps<T, R>, options: GroupCommitOptions = {}, label = 'groupCommit') {
    this.#deps = deps;
    const wait = options.maxWaitMs ?? DEFAULT_GROUP_COMMIT.maxWaitMs;
    this.#maxWaitMs = checked(`${label}.maxWaitMs`, wait, 0, MAX_WAIT_MS);
    this.#maxSize = checked(`${label}.maxSize`, options.maxSize ?? DEFAULT_GROUP_COMMIT.maxSize, 1, MAX_SIZE);
  }

  get stats(): GroupCommitStats {
    return { ...this.#stats };
  }

  /** Writes `item` with whatever others arrive within the wait; resolves with its own answer. */
  add(item: T): Promise<R> {
    this.#stats.members++;
    return new Promise<R>((resolve, reject) => {
      const member = { item, resolve, reject };
      if (this.#maxWaitMs === 0 || this.#maxSize === 1) {
        void this.#alone(member);
        return;
      }
      this.#pending.push(member);
      if (this.#pending.length >= this.#maxSize) {
        this.#flush();
      } else if (this.#pending.length === 1) {
        this.#timer = setTimeout(() => this.#flush(), this.#maxWaitMs);
        // Nothing being written: go at the end of this turn of the event loop, with whoever
        // arrived in it, rather than wait for a commit there is none of to share.
        if (this.#inFlight === 0) this.#immediate = setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    clearTimeout(this.#timer);
    clearImmediate(this.#immediate);
    this.#timer = undefined;
    this.#immediate = undefined;
    const members = this.#pending;
    this.#pending = [];
    if (members.length === 0) return;
    this.#inFlight++;
    void this.#group(members).finally(() => {
      this.#inFlight--;
      // Those who arrived during this write waited for it: the database is free again, go now.
      if (this.#inFlight === 0) this.#flush();
    });
  }

  async #group(members: readonly Member<T, R>[]): Promise<void> {
    if (members.length === 1 && members[0]) return this.#alone(members[0]);
    let results: readonly R[];
    try {
      this.#stats.writes++;
      results = await this.#deps.write(members.map((m) => m.item));
    } catch (err) {
      if (this.#deps.sharedFailure(err)) {
        for (const m of members) m.reject(err);
        return;
      }
      // Nothing was written; each member alone gets its own outcome (and only the culprit fails).
      this.#stats.retriedAlone += members.length;
      await Promise.all(members.map((m) => this.#alone(m)));
      return;
    }
    members.forEach((m, i) => settle(m, results[i]));
  }

  async #alone(member: Member<T, R>): Promise<void> {
    try {
      this.#stats.writes++;
      settle(member, (await this.#deps.write([member.item]))[0]);
    } catch (err) {
      member.reject(err);
    }
  }
}

function settle<T, R>(member: Member<T, R>, result: R | undefined): void {
  if (result === undefined) member.reject(new Error('a grouped write answered fewer results than items'));
  else member.resolve(result);
}

function checked(name: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${name} must be an integer from ${min} to ${max} (got ${value})`);
  }
  return value;
}
