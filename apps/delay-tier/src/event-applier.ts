import { JOB_REENTERED } from '@kairos/commands';
import { applyIsolatingFaults, classifyError } from '@kairos/core';
import {
  describeProblems,
  headerString,
  jobEventProblems,
  type DeadRecords,
  type DeadRecordVerdict,
  type RecordDecoder,
} from '@kairos/kafka';
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
  /** Reads kairos.job-events as JobEvent records of the current schema (older ones resolved). */
  readonly decoder: RecordDecoder<JobEventRecord>;
  /** Where an event that can never be applied goes, with its reason. */
  readonly dead: DeadRecords;
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
  readonly message: KafkaMessage;
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
  // One event Redis refuses as data is set aside; the others are applied.
  const applyAll = () =>
    applyIsolatingFaults(
      events,
      (some) => apply(deps, partition, epoch, some),
      (err) => classifyError(err).class === 'invalid',
      (e, err) =>
        deps.dead.setAside(
          { topic, partition, message: e.message },
          { reason: 'UNAPPLICABLE', message: `Redis refused the event: ${String(err)}` },
        ),
    );
  // Stale: either Redis lost our state (rebuilt first; the events are applied again on refetch)
  // or another instance owns the partition (false: the consumer stops reading it). OOM:
  // PostgreSQL holds the jobs and PostgreSQL-only dispatch runs them.
  const r = await deps.guard.run(partition, epoch, applyAll, { awaitRecovery: true });
  if (r.outcome === 'done') for (const e of events) if (e.eventId !== undefined) deps.recent?.add(e.eventId);
  return r.outcome !== 'stale';
}

/**
 * The messages' events, without second copies already applied. A value that can never be applied
 * (it does not decode, is not a JobEvent, or has a field out of range) is set aside on
 * kairos.dead-records, with its reason, and skipped; a registry outage throws (the batch is
 * retried).
 */
async function decodeEvents(
  deps: EventApplierDeps,
  topic: string,
  partition: number,
  messages: readonly KafkaMessage[],
): Promise<DecodedEvent[]> {
  type Read = DecodedEvent | { readonly message: KafkaMessage; readonly refused: DeadRecordVerdict };
  const decoded = await Promise.all(
    messages.map(async (message): Promise<Read | undefined> => {
      if (!message.value) return undefined;
      const eventId = headerString(message.headers, 'id');
      if (eventId !== undefined && deps.recent?.has(eventId)) return undefined;
      const d = await deps.decoder.decode(message.value);
      if (!d.ok) return { message, refused: { reason: d.reason, message: d.message, schemaId: d.schemaId } };
      const refused = outOfRange(d.record, d.schemaId);
      if (refused) return { message, refused };
      return {
        message,
        event: d.record,
        eventId,
        traceparent: headerString(message.headers, 'traceparent') ?? null,
        reentry: headerString(message.headers, 'kairos-event-type') === JOB_REENTERED,
        kafkaAtMs: Number(message.timestamp),
      };
    }),
  );
  const events: DecodedEvent[] = [];
  for (const e of decoded) {
    if (e === undefined) continue;
    if ('refused' in e) await deps.dead.setAside({ topic, partition, message: e.message }, e.refused);
    else events.push(e);
  }
  return events;
}

/** The verdict on an event with a field out of range, or undefined if it has none. */
function outOfRange(event: JobEventRecord, schemaId: number): DeadRecordVerdict | undefined {
  const problems = jobEventProblems(event);
  if (problems.length === 0) return undefined;
  return {
    reason: 'INVALID_FIELD',
    message: `job event out of range: ${describeProblems(problems)}`,
    fields: problems,
    schemaId,
  };
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
