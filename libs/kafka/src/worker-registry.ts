import { SCHEMAS, type WorkerHeartbeatRecord } from '@kairos/schemas';
import type { Kafka, Producer } from 'kafkajs';
import type { AvroCodec } from './avro.js';
import { RecordDecoder } from './record-decoder.js';
import type { RegistryClient } from './registry.js';
import { tailTopic, UnknownTopicError } from './tail.js';

// kairos.workers has one writer module: this one. Each heartbeat is written under two keys: the
// worker instance's (`worker:<group>/<worker id>`, tombstoned by its clean stop) and its group's
// (`group:<group>`, the last any member said: kept after every member stopped, so a group no
// service uses any more stays visible until an operator retires it, which tombstones both kinds).

/** A worker instance's key on kairos.workers. */
export const instanceKey = (groupId: string, workerId: string): string => `worker:${groupId}/${workerId}`;

/** A worker group's key on kairos.workers. */
export const groupKey = (groupId: string): string => `group:${groupId}`;

/** Publishes a worker's heartbeat under its instance's and its group's keys (acks=all). */
export async function announceWorker(
  producer: Producer,
  codec: AvroCodec,
  topic: string,
  heartbeat: WorkerHeartbeatRecord,
): Promise<void> {
  const value = await codec.encode(topic, SCHEMAS.workerHeartbeat, heartbeat);
  await producer.send({
    topic,
    acks: -1,
    messages: [
      { key: instanceKey(heartbeat.group_id, heartbeat.worker_id), value },
      { key: groupKey(heartbeat.group_id), value },
    ],
  });
}

/** Forgets instances or groups: a tombstone per key (acks=all). */
export async function forgetWorkers(
  producer: Producer,
  topic: string,
  keys: readonly string[],
): Promise<void> {
  if (keys.length === 0) return;
  await producer.send({ topic, acks: -1, messages: keys.map((key) => ({ key, value: null })) });
}

/** A heartbeat as kairos.workers last holds it under one key. */
export interface Announced {
  readonly heartbeat: WorkerHeartbeatRecord;
  /** When it was written (the record's timestamp), ms. */
  readonly seenAt: number;
}

export interface WorkerRegistryView {
  /** Per group: the last heartbeat of any of its members. */
  readonly groups: ReadonlyMap<string, Announced>;
  /** Worker instances not stopped cleanly (running, or crashed). */
  readonly instances: readonly Announced[];
}

/**
 * kairos.workers read from its start to its end, keeping the last value of each key (what
 * compaction converges to). A record that does not decode is skipped (it names no worker a reader
 * could show). An absent topic holds nothing.
 */
export async function readWorkerRegistry(
  kafka: Kafka,
  registry: RegistryClient,
  topic: string,
): Promise<WorkerRegistryView> {
  const decoder = new RecordDecoder<WorkerHeartbeatRecord>(registry, topic, SCHEMAS.workerHeartbeat);
  const last = new Map<string, Announced>();
  try {
    for await (const r of tailTopic(kafka, { topic, start: { from: 'beginning' } })) {
      const key = r.key?.toString('utf8') ?? '';
      const decoded = r.value === null ? undefined : await decoder.decode(r.value);
      if (decoded?.ok) last.set(key, { heartbeat: decoded.record, seenAt: r.timestamp.getTime() });
      else last.delete(key);
    }
  } catch (err) {
    if (!(err instanceof UnknownTopicError)) throw err;
  }
  const groups = new Map<string, Announced>();
  const instances: Announced[] = [];
  for (const [key, a] of last) {
    if (key.startsWith('group:')) groups.set(a.heartbeat.group_id, a);
    else if (key.startsWith('worker:')) instances.push(a);
  }
  return { groups, instances };
}

/** Whether a worker instance is live at `now`: heard from within 3 of its intervals. */
export function isLive(w: Announced, now: number): boolean {
  return now - w.seenAt <= 3 * w.heartbeat.interval_ms;
}
