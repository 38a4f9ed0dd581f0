import { randomBytes } from 'node:crypto';
import type { Consumer, Kafka } from 'kafkajs';
import { fetchTopicOffsetsSettled } from './offsets.js';
import { withAdmin } from './groups.js';
import { TailBuffer, type TailRecord } from './tail-buffer.js';

export type { TailRecord } from './tail-buffer.js';

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

interface Plan {
  readonly starts: Map<number, number>;
  /** Log end per partition when the tail began: where a tail without follow stops. */
  readonly ends: Map<number, number>;
}

async function planTail(kafka: Kafka, o: TailOptions): Promise<Plan> {
  return withAdmin(kafka, async (admin) => {
    if (!(await admin.listTopics()).includes(o.topic))
      throw new UnknownTopicError(`topic ${o.topic} does not exist`);
    const offsets = await fetchTopicOffsetsSettled(admin, o.topic);
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
 * nothing and is deleted afterwards, so no application's offsets move. A consumer that crashes
 * ends the tail with its error.
 */
export async function* tailTopic(kafka: Kafka, o: TailOptions): AsyncGenerator<TailRecord> {
  const { starts, ends } = await planTail(kafka, o);
  const buffer = new TailBuffer(starts, ends, o.follow ?? false);
  if (buffer.done()) return;
  // Not `kairos-…`: the apps' groups are, and `kairos status` lists those.
  const groupId = `kairos.tail-${randomBytes(6).toString('hex')}`;
  const consumer = kafka.consumer({
    groupId,
    maxWaitTimeInMs: o.maxWaitMs ?? 500,
    allowAutoTopicCreation: false,
    // A restarted consumer would begin at the log end, not where the tail was: a crash ends the
    // tail instead, with its error (the topic deleted, say), for the reader to decide.
    retry: { retries: 5, restartOnFailure: () => Promise.resolve(false) },
  });
  const onAbort = () => buffer.stop();
  o.signal?.addEventListener('abort', onAbort);
  // Aborted while the tail was planned: the listener came too late to hear it.
  if (o.signal?.aborted) buffer.stop();
  consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) =>
    buffer.reached(payload.partition, Number(payload.firstOffset), Number(payload.lastOffset)),
  );
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (!payload.restart) buffer.stop(payload.error);
  });
  try {
    if (!buffer.stopped) await startConsumer(consumer, o.topic, starts, buffer);
    let given = 0;
    while (!buffer.stopped && !buffer.done() && (o.limit === undefined || given < o.limit)) {
      const r = buffer.take();
      if (!r) {
        await buffer.more();
        continue;
      }
      given += 1;
      yield r;
    }
    if (buffer.failure) throw buffer.failure;
  } finally {
    // Releases a fetch held by back-pressure, or disconnect() would wait for it forever.
    buffer.stop();
    o.signal?.removeEventListener('abort', onAbort);
    await consumer.disconnect();
    await withAdmin(kafka, (admin) => admin.deleteGroups([groupId])).catch(() => undefined);
  }
}

/** Joins the private group, hands every batch to the buffer, and seeks each partition to its start. */
async function startConsumer(
  consumer: Consumer,
  topic: string,
  starts: ReadonlyMap<number, number>,
  buffer: TailBuffer,
): Promise<void> {
  await consumer.connect();
  await consumer.subscribe({ topic });
  await consumer.run({
    autoCommit: false,
    // Only hands records over; the reader does the rest.
    eachBatch: ({ batch, heartbeat }) => buffer.push(batch, heartbeat),
  });
  for (const [partition, offset] of starts) consumer.seek({ topic, partition, offset: String(offset) });
}
