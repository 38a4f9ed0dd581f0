/** What a delivered message is to the partition's watermark. */
export type Delivery = 'new' | 'running' | 'finished';

interface Entry {
  readonly offset: bigint;
  finished: boolean;
}

/**
 * The commit watermark of one partition this worker owns: tasks finish out of order, but the
 * partition is committed in order, only up to the first task not finished yet (or past the last
 * one taken when all are), so a restart or a new owner skips nothing unfinished. It also tells a
 * redelivered message (the group fetching again from the committed position after a rebalance
 * that left the partition here) from a new one.
 */
export class PartitionWatermark {
  readonly topic: string;
  readonly partition: number;
  /** Offsets taken and not behind the watermark yet, ascending; `#head` is the first one kept. */
  #entries: Entry[] = [];
  #head = 0;
  readonly #unfinished = new Map<bigint, Entry>();
  /** The run of deliveries being read, [from, next): what in it is not unfinished has finished. */
  #from: bigint | undefined;
  #next: bigint | undefined;
  /** Highest offset ever taken. */
  #last: bigint | undefined;
  /** The position last committed (or where this worker started: nothing below it is ours). */
  #committed: bigint | undefined;
  #revoked = false;

  constructor(topic: string, partition: number) {
    this.topic = topic;
    this.partition = partition;
  }

  /** The partition was taken from this worker: nothing of it is committed or started here any more. */
  get revoked(): boolean {
    return this.#revoked;
  }

  revoke(): void {
    this.#revoked = true;
  }

  /** Takes a delivered message: 'new' (run it), or one taken before, still 'running' or 'finished'. */
  accept(offset: string): Delivery {
    const o = BigInt(offset);
    if (this.#unfinished.has(o)) return 'running';
    if (this.#from !== undefined && this.#next !== undefined && o >= this.#from && o < this.#next) {
      return 'finished';
    }
    // Read again from below this run (KafkaJS reset the position): a new run. What it brings
    // again is run again; its claim tells a finished attempt.
    if (this.#from === undefined || this.#next === undefined || o < this.#from) this.#from = o;
    this.#next = o + 1n;
    const entry: Entry = { offset: o, finished: false };
    this.#unfinished.set(o, entry);
    if (this.#last === undefined || o > this.#last) {
      this.#entries.push(entry);
      this.#last = o;
    } else {
      this.#insert(entry);
    }
    this.#committed ??= o;
    return 'new';
  }

  /** A taken task is finished (its result durable, or nothing to run); true if the watermark moved. */
  finish(offset: string): boolean {
    const entry = this.#unfinished.get(BigInt(offset));
    if (!entry) return false;
    entry.finished = true;
    this.#unfinished.delete(entry.offset);
    const before = this.#head;
    while (this.#entries[this.#head]?.finished) this.#head++;
    // Drop what is behind the watermark now and then, not on every move.
    if (this.#head > 1024 && this.#head * 2 > this.#entries.length) this.#compact();
    return this.#head !== before;
  }

  /** The position to commit (the next offset to read): the first unfinished task, or past the last. */
  get position(): bigint | undefined {
    const head = this.#entries[this.#head];
    if (head) return head.offset;
    return this.#last === undefined ? undefined : this.#last + 1n;
  }

  /** The position if it is past the one committed, as Kafka takes it; else undefined. */
  due(): string | undefined {
    const p = this.position;
    return p !== undefined && this.#committed !== undefined && p > this.#committed ? p.toString() : undefined;
  }

  /** The group took a commit of `position`. */
  committed(position: string): void {
    const p = BigInt(position);
    if (this.#committed === undefined || p > this.#committed) this.#committed = p;
  }

  /** Tasks taken and not finished. */
  get unfinished(): number {
    return this.#unfinished.size;
  }

  #compact(): void {
    this.#entries = this.#entries.slice(this.#head);
    this.#head = 0;
  }

  #insert(entry: Entry): void {
    this.#compact();
    let i = 0;
    while (i < this.#entries.length && (this.#entries[i] as Entry).offset < entry.offset) i++;
    this.#entries.splice(i, 0, entry);
  }
}
