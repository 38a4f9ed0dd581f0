import { JOB_REENTERED } from '@kairos/commands';
import { isKairosError } from '@kairos/core';
import { headerString, type AvroCodec } from '@kairos/kafka';
import type { HopLagMetric, Logger } from '@kairos/observability';
import type { HotEvent, HotSet } from '@kairos/redis';
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
  /** Outbox → Kafka and Kafka → hot set of each job added. */
  readonly hops?: HopLagMetric;
}

/** A decoded event of a batch, with the id its copies (relay, Debezium) share. */
interface DecodedEvent {
  readonly event: JobEventRecord;
  readonly eventId: string | undefined;
  readonly traceparent: string | null;
  /** The watchdog's re-entry of a job no hot set holds (applied even at a version seen before). */
  readonly reentry: boolean;
  /** The Kafka record's timestamp, ms (when it was produced). */
  readonly kafkaAtMs: number;
}

/**
 * Applies kairos.job-events messages of one partition to its hot set in one Redis call. Returns
 * false if this instance no longer owns the partition (its epoch went stale), true otherwise. A
 * partition in PostgreSQL-only mode takes nothing from events: PostgreSQL already holds the job,
 * and the hot set is rebuilt from it when Redis has memory again.
 */
export async function applyJobEvents(
  deps: EventApplierDeps,
  topic: string,
  partition: number,
  messages: readonly KafkaMessage[],
): Promise<boolean> {
  const epochP = deps.ownership.epoch(partition);
  if (!epochP) return false;
  const epoch = await epochP;
  if (deps.modes.isFallback(partition)) return true;
  const events = await decodeEvents(deps, topic, partition, messages);
  if (events.length === 0) return true;
  // Stale: either Redis lost our state (rebuilt first; the events are applied again on refetch)
  // or another instance owns the partition (false: the consumer stops reading it). OOM:
  // PostgreSQL holds the jobs and PostgreSQL-only dispatch runs them.
  const r = await deps.guard.run(partition, epoch, () => apply(deps, partition, epoch, events), {
    awaitRecovery: true,
  });
  if (r.outcome === 'done') for (const e of events) if (e.eventId !== undefined) deps.recent?.add(e.eventId);
  return r.outcome !== 'stale';
}

/** The messages' events, without second copies already applied and values that never decode. */
async function decodeEvents(
  deps: EventApplierDeps,
  topic: string,
  partition: number,
  messages: readonly KafkaMessage[],
): Promise<DecodedEvent[]> {
  const decoded = await Promise.all(
    messages.map(async (message): Promise<DecodedEvent | undefined> => {
      if (!message.value) return undefined;
      const eventId = headerString(message.headers, 'id');
      if (eventId !== undefined && deps.recent?.has(eventId)) return undefined;
      try {
        const event = (await deps.codec.decode(topic, message.value)) as JobEventRecord;
        return {
          event,
          eventId,
          traceparent: headerString(message.headers, 'traceparent') ?? null,
          reentry: headerString(message.headers, 'kairos-event-type') === JOB_REENTERED,
          kafkaAtMs: Number(message.timestamp),
        };
      } catch (err) {
        if (!isKairosError(err, 'UNDECODABLE')) throw err; // registry down: the batch is retried
        // A value that does not decode can never be applied; skipping it keeps the partition moving.
        deps.log.error({ err, partition, offset: message.offset }, 'undecodable job event skipped');
        return undefined;
      }
    }),
  );
  return decoded.filter((e) => e !== undefined);
}

async function apply(
  deps: EventApplierDeps,
  partition: number,
  epoch: number,
  events: readonly DecodedEvent[],
): Promise<void> {
  deps.log.debug({ partition, events: events.length }, 'job events');
  const ordinary = events.filter((e) => !e.reentry);
  const reentries = events.filter((e) => e.reentry);
  // Versions make the order of the two calls irrelevant; re-entries are rare.
  if (ordinary.length > 0) await applyMode(deps, partition, epoch, ordinary, 'event');
  if (reentries.length > 0) {
    const added = await applyMode(deps, partition, epoch, reentries, 'hydrate');
    deps.log.warn({ partition, reentries: reentries.length, added }, 'watchdog re-entered lost jobs');
  }
}

/** Applies events in one mode ('hydrate': a version seen but absent is added again); returns how many were added. */
async function applyMode(
  deps: EventApplierDeps,
  partition: number,
  epoch: number,
  events: readonly DecodedEvent[],
  mode: 'event' | 'hydrate',
): Promise<number> {
  const records = events.map(({ event, traceparent }) =>
    event.event_type === 'SCHEDULED' ? hotRecord(event, traceparent) : undefined,
  );
  const hotEvents: HotEvent[] = events.map(({ event }, i) => {
    const record = records[i];
    return record
      ? { kind: 'schedule', job: hotJob(record) }
      : { kind: 'cancel', jobId: event.job_id, version: event.version };
  });
  const outcomes = await deps.hot.applyEvents(partition, epoch, hotEvents, {
    windowMs: deps.windowMs(),
    mode,
  });
  const at = Date.now();
  let added = 0;
  outcomes.forEach((o, i) => {
    const record = records[i];
    const e = events[i];
    if (o === 'added' && record && e) {
      added += 1;
      deps.onScheduled?.(record, at);
      deps.hops?.observe(
        'outbox_to_kafka',
        record.resource_class,
        record.tenant_id,
        (e.kafkaAtMs - e.event.occurred_at) / 1000,
      );
      deps.hops?.observe(
        'kafka_to_hot_set',
        record.resource_class,
        record.tenant_id,
        (at - e.kafkaAtMs) / 1000,
      );
    }
  });
  return added;
}
