import { randomBytes } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { withAdmin } from './groups.js';

/** The topic to read does not exist. */
export class UnknownTopicError extends Error {
  override readonly name = 'UnknownTopicError';
}

/** Where a tail starts on each partition. */
export type TailStart =
  | { readonly from: 'beginning' }
  /** The last `last` records of each partition (0: only what arrives next). */
  | { readonly from: 'end'; readonly last: number }
  | { readonly offset: number }
  /** The first record at or after this time (ms since the epoch). */
  | { readonly timestamp: number };

export interface TailOptions {
  readonly topic: string;
  readonly start: TailStart;
  /** Partitions to read. Default: all. */
  readonly partitions?: readonly number[];
  /** Stop after this many records. Default: no limit. */
  readonly limit?: number;
  /** Keep waiting for new records; otherwise stop at the log end seen at the start. Default: false. */
  readonly follow?: boolean;
  /**
   * Longest a fetch waits on the broker for new records, ms (it returns as soon as one arrives).
   * Default: 500. A long-lived follower of a quiet topic sets more, to cost less while idle.
   */
  readonly maxWaitMs?: number;
  readonly signal?: AbortSignal;
}

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

interface Plan {
  readonly starts: Map<number, number>;
  /** Log end per partition when the tail began: where a tail without follow stops. */
  readonly ends: Map<number, number>;
}

async function planTail(kafka: Kafka, o: TailOptions): Promise<Plan> {
  return withAdmin(kafka, async (admin) => {
    if (!(await admin.listTopics()).includes(o.topic))
      throw new UnknownTopicError(`topic ${o.topic} does not exist`);
    const offsets = await admin.fetchTopicOffsets(o.topic);
    for (const p of o.partitions ?? []) {
      if (!offsets.some((x) => x.partition === p))
        throw new RangeError(`${o.topic} has no partition ${p} (it has ${offsets.length})`);
    }
    const chosen = offsets.filter((x) => !o.partitions || o.partitions.includes(x.partition));
    const at =
      'timestamp' in o.start ? await admin.fetchTopicOffsetsByTimestamp(o.topic, o.start.timestamp) : [];
    const starts = new Map<number, number>();
    const ends = new Map<number, number>();
    for (const x of chosen) {
      const low = Number(x.low);
      const high = Number(x.high);
      const s = o.start;
      const byTime = Number(at.find((a) => a.partition === x.partition)?.offset ?? -1);
      const start =
        'timestamp' in s
          ? byTime < 0
            ? high
            : byTime
          : 'offset' in s
            ? s.offset
            : s.from === 'beginning'
              ? low
              : high - s.last;
      starts.set(x.partition, Math.min(high, Math.max(low, start)));
      ends.set(x.partition, high);
    }
    return { starts, ends };
  });
}

/**
 * Reads a topic as `tail` reads a file: from a time, an offset, the beginning or the last few
 * records, then stops at the log end (or follows it). A private consumer group that commits
 * nothing and is deleted afterwards, so no application's offsets move.
 */
export async function* tailTopic(kafka: Kafka, o: TailOptions): AsyncGenerator<TailRecord> {
  const { starts, ends } = await planTail(kafka, o);
  /** Per partition, the offset after the last one fetched, control records included. */
  const reached = new Map(starts);
  /** Records of each partition handed over and not yet read. */
  const queued = new Map([...starts.keys()].map((p) => [p, 0]));
  // A partition is through when everything before its end was fetched and read: transaction
  // markers and aborted records are never handed over, so counting read records would not do.
  const done = (): boolean =>
    !o.follow && [...reached].every(([p, n]) => n >= (ends.get(p) ?? 0) && queued.get(p) === 0);
  if (done()) return;
  // Not `kairos-…`: the apps' groups are, and `kairos status` lists those.
  const groupId = `kairos.tail-${randomBytes(6).toString('hex')}`;
  const consumer = kafka.consumer({
    groupId,
    maxWaitTimeInMs: o.maxWaitMs ?? 500,
    allowAutoTopicCreation: false,
  });
  const queue: TailRecord[] = [];
  let stopped = false;
  let wake: (() => void) | undefined;
  let drained: (() => void) | undefined;
  const poke = () => {
    wake?.();
    drained?.();
    wake = drained = undefined;
  };
  const onAbort = () => ((stopped = true), poke());
  o.signal?.addEventListener('abort', onAbort);
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
    // A batch that begins at or past the end is not ours (there is none before the seeks apply:
    // KafkaJS drops fetches of a partition with a seek pending); only the follow case reads there.
    if (!reached.has(payload.partition) || Number(payload.firstOffset) >= (ends.get(payload.partition) ?? 0))
      return;
    const after = Number(payload.lastOffset) + 1;
    if (after > (reached.get(payload.partition) ?? 0)) reached.set(payload.partition, after);
    poke();
  });
  try {
    await consumer.connect();
    await consumer.subscribe({ topic: o.topic });
    await consumer.run({
      autoCommit: false,
      // Only hands records over; the reader does the rest.
      eachBatch: async ({ batch, heartbeat }) => {
        const end = o.follow ? Infinity : (ends.get(batch.partition) ?? 0);
        if (!starts.has(batch.partition)) return;
        for (const m of batch.messages) {
          const offset = Number(m.offset);
          if (offset >= end) break;
          queue.push({
            partition: batch.partition,
            offset,
            timestamp: new Date(Number(m.timestamp)),
            key: m.key,
            headers: Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, headerText(v)])),
            value: m.value,
          });
          queued.set(batch.partition, (queued.get(batch.partition) ?? 0) + 1);
        }
        poke();
        // Back-pressure: a slow reader holds the fetch loop instead of filling memory, still
        // heartbeating so the group does not evict this member meanwhile.
        while (queue.length > 1000 && !stopped) {
          await Promise.race([
            new Promise<void>((r) => (drained = r)),
            new Promise<void>((r) => setTimeout(r, 1000).unref()),
          ]);
          await heartbeat();
        }
      },
    });
    for (const [partition, offset] of starts)
      consumer.seek({ topic: o.topic, partition, offset: String(offset) });
    let given = 0;
    while (!stopped && !done() && (o.limit === undefined || given < o.limit)) {
      const r = queue.shift();
      if (queue.length === 0) drained?.();
      if (!r) {
        await new Promise<void>((resolve) => (wake = resolve));
        continue;
      }
      queued.set(r.partition, (queued.get(r.partition) ?? 1) - 1);
      given += 1;
      yield r;
    }
  } finally {
    // Releases a fetch held by back-pressure, or disconnect() would wait for it forever.
    stopped = true;
    poke();
    o.signal?.removeEventListener('abort', onAbort);
    await consumer.disconnect();
    await withAdmin(kafka, (admin) => admin.deleteGroups([groupId])).catch(() => undefined);
  }
}
