import type { Batch } from 'kafkajs';

export interface TailRecord {
  readonly partition: number;
  readonly offset: number;
  readonly timestamp: Date;
  readonly key: Buffer | null;
  /** Header values as UTF-8 (a repeated header: its values joined with ", "). */
  readonly headers: Readonly<Record<string, string>>;
  readonly value: Buffer | null;
}

/** Bytes of a header value (KafkaJS gives Buffers, strings or arrays of them). */
function headerText(v: unknown): string {
  if (Array.isArray(v)) return v.map(headerText).join(', ');
  if (Buffer.isBuffer(v)) return v.toString('utf8');
  return typeof v === 'string' ? v : '';
}

/** Records handed over by more than this wait for the reader (back-pressure). */
const MAX_QUEUED = 1000;

/**
 * What a tail's consumer fetched and its reader has not read yet, and how far each partition got:
 * the consumer's callbacks fill it, the reader empties it, either side waits on the other.
 */
export class TailBuffer {
  readonly #queue: TailRecord[] = [];
  /** Per partition, the offset after the last one fetched, control records included. */
  readonly #reached: Map<number, number>;
  /** Records of each partition handed over and not yet read. */
  readonly #queued: Map<number, number>;
  readonly #starts: ReadonlyMap<number, number>;
  readonly #ends: ReadonlyMap<number, number>;
  readonly #follow: boolean;
  #stopped = false;
  #failure: Error | undefined;
  #wake: (() => void) | undefined;
  #drained: (() => void) | undefined;

  constructor(starts: ReadonlyMap<number, number>, ends: ReadonlyMap<number, number>, follow: boolean) {
    this.#starts = starts;
    this.#ends = ends;
    this.#follow = follow;
    this.#reached = new Map(starts);
    this.#queued = new Map([...starts.keys()].map((p) => [p, 0]));
  }

  /** Stopped (abort, the reader gone, or the consumer failed for good). */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Why the consumer stopped for good, if it did. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  /**
   * Everything before each partition's end was fetched and read. Transaction markers and aborted
   * records are never handed over, so counting read records would not do.
   */
  done(): boolean {
    return (
      !this.#follow &&
      [...this.#reached].every(([p, n]) => n >= (this.#ends.get(p) ?? 0) && this.#queued.get(p) === 0)
    );
  }

  /** Ends the tail; with an error, the reader gets it. Releases a fetch held by back-pressure too. */
  stop(failure?: Error): void {
    this.#stopped = true;
    this.#failure ??= failure;
    this.#poke();
  }

  /** A fetched batch reached `lastOffset` (control records included, which are never handed over). */
  reached(partition: number, firstOffset: number, lastOffset: number): void {
    // A batch that begins at or past the end is not ours (there is none before the seeks apply:
    // KafkaJS drops fetches of a partition with a seek pending); only the follow case reads there.
    if (!this.#reached.has(partition) || firstOffset >= (this.#ends.get(partition) ?? 0)) return;
    const after = lastOffset + 1;
    if (after > (this.#reached.get(partition) ?? 0)) this.#reached.set(partition, after);
    this.#poke();
  }

  /** Hands a batch's records over, then holds while the reader is far behind. */
  async push(batch: Batch, heartbeat: () => Promise<void>): Promise<void> {
    if (!this.#starts.has(batch.partition)) return;
    const end = this.#follow ? Infinity : (this.#ends.get(batch.partition) ?? 0);
    for (const m of batch.messages) {
      const offset = Number(m.offset);
      if (offset >= end) break;
      this.#queue.push({
        partition: batch.partition,
        offset,
        timestamp: new Date(Number(m.timestamp)),
        key: m.key,
        headers: Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, headerText(v)])),
        value: m.value,
      });
      this.#queued.set(batch.partition, (this.#queued.get(batch.partition) ?? 0) + 1);
    }
    this.#poke();
    // A slow reader holds the fetch loop instead of filling memory, still heartbeating so the
    // group does not evict this member meanwhile.
    while (this.#queue.length > MAX_QUEUED && !this.#stopped) {
      await Promise.race([
        new Promise<void>((r) => (this.#drained = r)),
        new Promise<void>((r) => setTimeout(r, 1000).unref()),
      ]);
      await heartbeat();
    }
  }

  /** The next record, or undefined when none is there yet (then wait on `more()`). */
  take(): TailRecord | undefined {
    const r = this.#queue.shift();
    if (this.#queue.length === 0) this.#drained?.();
    if (r) this.#queued.set(r.partition, (this.#queued.get(r.partition) ?? 1) - 1);
    return r;
  }

  /** Resolves when records arrive, a partition moves or the tail stops. */
  more(): Promise<void> {
    return new Promise<void>((resolve) => (this.#wake = resolve));
  }

  #poke(): void {
    this.#wake?.();
    this.#drained?.();
    this.#wake = this.#drained = undefined;
  }
}
