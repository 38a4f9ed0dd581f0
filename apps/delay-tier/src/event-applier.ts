import { isKairosError } from '@kairos/core';
import { headerString, type AvroCodec } from '@kairos/kafka';
import type { Logger } from '@kairos/observability';
import type { HotSet } from '@kairos/redis';
import type { JobEventRecord } from '@kairos/schemas';
import type { KafkaMessage } from 'kafkajs';
import type { Ownership } from './ownership.js';
import type { OwnershipGuard } from './ownership-guard.js';
import type { PartitionModes } from './partition-modes.js';
import type { RecentEvents } from './recent-events.js';
import { hotJob, hotRecord, type HotRecord } from './record.js';

export interface EventApplierDeps {
  readonly codec: AvroCodec;
  readonly hot: HotSet;
  readonly ownership: Ownership;
  readonly modes: PartitionModes;
  /** STALE_EPOCH and REDIS_OOM policy. */
  readonly guard: OwnershipGuard;
  readonly log: Logger;
  /** The lookahead window in force: jobs due later stay in PostgreSQL only. */
  readonly windowMs: () => number;
  readonly onScheduled?: ((record: HotRecord, atMs: number) => void) | undefined;
  /** Events applied lately: the second copy of each (relay, then Debezium) is skipped. */
  readonly recent?: RecentEvents;
}

/**
 * Applies one kairos.job-events message to its partition's hot set. Returns false if this
 * instance no longer owns the partition (its epoch went stale), true otherwise. A partition in
 * PostgreSQL-only mode takes nothing from events: PostgreSQL already holds the job, and the hot
 * set is rebuilt from it when Redis has memory again.
 */
export async function applyJobEvent(
  deps: EventApplierDeps,
  topic: string,
  partition: number,
  message: KafkaMessage,
): Promise<boolean> {
  const epochP = deps.ownership.epoch(partition);
  if (!epochP) return false;
  const epoch = await epochP;
  if (!message.value || deps.modes.isFallback(partition)) return true;
  const eventId = headerString(message.headers, 'id');
  if (eventId !== undefined && deps.recent?.has(eventId)) return true;
  let event: JobEventRecord;
  try {
    event = (await deps.codec.decode(topic, message.value)) as JobEventRecord;
  } catch (err) {
    if (!isKairosError(err, 'UNDECODABLE')) throw err; // registry down: the batch is retried
    // A value that does not decode can never be applied; skipping it keeps the partition moving.
    deps.log.error({ err, partition, offset: message.offset }, 'undecodable job event skipped');
    return true;
  }
  // Stale: either Redis lost our state (rebuilt first; the event is applied again on refetch) or
  // another instance owns the partition (false: the consumer stops reading it). OOM: PostgreSQL
  // holds the job and PostgreSQL-only dispatch runs it.
  const r = await deps.guard.run(partition, epoch, () => apply(deps, partition, epoch, event, message), {
    awaitRecovery: true,
  });
  if (r.outcome === 'done' && eventId !== undefined) deps.recent?.add(eventId);
  return r.outcome !== 'stale';
}

async function apply(
  deps: EventApplierDeps,
  partition: number,
  epoch: number,
  event: JobEventRecord,
  message: KafkaMessage,
): Promise<void> {
  deps.log.debug({ partition, type: event.event_type, job: event.job_id, due: event.due_at }, 'job event');
  if (event.event_type === 'SCHEDULED') {
    const record = hotRecord(event, headerString(message.headers, 'traceparent') ?? null);
    const outcome = await deps.hot.schedule(partition, epoch, hotJob(record), { windowMs: deps.windowMs() });
    if (outcome === 'added') deps.onScheduled?.(record, Date.now());
  } else {
    await deps.hot.cancel(partition, epoch, event.job_id, event.version);
  }
}
