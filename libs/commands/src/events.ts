import type { Job } from '@kairos/core';
import type { OutboxRow } from '@kairos/db';
import type { AvroCodec } from '@kairos/kafka';
import { SCHEMAS, type DlqEntryRecord, type JobEventRecord } from '@kairos/schemas';
import { newId } from './ids.js';

/** Outbox aggregatetype of job events; the connector routes it to `kairos.job-events`. */
export const JOB_EVENTS_AGGREGATE = 'job-events';

export type JobEventType = JobEventRecord['event_type'];

/**
 * Outbox type (the `kairos-event-type` header) of a SCHEDULED event the reconciliation watchdog
 * sends again for a job no hot set holds: the partition owner applies it even at a version it
 * has seen (the hot entry was lost), which a replayed ordinary event must never do.
 */
export const JOB_REENTERED = 'JobReentered';

type EventJob = Pick<
  Job,
  | 'id'
  | 'tenantId'
  | 'type'
  | 'resourceClass'
  | 'payload'
  | 'dueAt'
  | 'deadlineAt'
  | 'version'
  | 'fence'
  | 'attempt'
  | 'maxAttempts'
  | 'routingKey'
  | 'shard'
  | 'traceparent'
>;

export function jobEventRecord(
  type: JobEventType,
  job: EventJob,
  eventId: string,
  now: Date,
): JobEventRecord {
  return {
    event_id: eventId,
    event_type: type,
    job_id: job.id,
    tenant_id: job.tenantId,
    job_type: job.type,
    resource_class: job.resourceClass,
    payload: job.payload,
    due_at: job.dueAt.getTime(),
    deadline_at: job.deadlineAt?.getTime() ?? null,
    version: job.version,
    fence: job.fence,
    attempt: job.attempt,
    max_attempts: job.maxAttempts,
    routing_key: job.routingKey,
    shard: job.shard,
    occurred_at: now.getTime(),
  };
}

/**
 * Serializes a job event (Avro, Confluent wire format) into the outbox row that carries it. Its
 * `traceparent` header is the job's own trace context (so every hop of the job joins one trace);
 * `traceparent` (the request's) only for a job created before jobs kept one.
 */
export async function jobEventOutboxRow(
  codec: AvroCodec,
  topic: string,
  type: JobEventType,
  job: EventJob,
  now: Date,
  traceparent: string | null,
  options: { readonly reentry?: boolean } = {},
): Promise<OutboxRow> {
  const id = newId();
  return {
    id,
    aggregateType: JOB_EVENTS_AGGREGATE,
    aggregateId: job.routingKey,
    type: options.reentry ? JOB_REENTERED : `Job${type === 'SCHEDULED' ? 'Scheduled' : 'Cancelled'}`,
    payload: await codec.encode(topic, SCHEMAS.jobEvent, jobEventRecord(type, job, id, now)),
    jobId: job.id,
    tenantId: job.tenantId,
    dueAt: job.dueAt,
    traceparent: job.traceparent ?? traceparent,
  };
}

/** Outbox aggregatetype of a resource class's dead letters; the connector routes it to `kairos.dlq.<class>`. */
export function dlqAggregate(resourceClass: string): string {
  return `dlq.${resourceClass}`;
}

/**
 * Serializes a dead letter (Avro, Confluent wire format, registered under `<topic>-value`) into
 * the outbox row that carries it to `kairos.dlq.<class>`, keyed by the job id. Written in the
 * transaction that marks the job FAILED, so the entry is published if and only if that commits.
 */
export async function dlqOutboxRow(
  codec: AvroCodec,
  topic: string,
  entry: Omit<DlqEntryRecord, 'event_id'>,
  traceparent: string | null,
): Promise<OutboxRow> {
  const id = newId();
  return {
    id,
    aggregateType: dlqAggregate(entry.resource_class),
    aggregateId: entry.job_id,
    type: 'JobDeadLettered',
    payload: await codec.encode(topic, SCHEMAS.dlqEntry, { event_id: id, ...entry } satisfies DlqEntryRecord),
    jobId: entry.job_id,
    tenantId: entry.tenant_id,
    dueAt: new Date(entry.due_at),
    traceparent,
  };
}
