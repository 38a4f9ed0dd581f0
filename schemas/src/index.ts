import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';

/**
 * The Avro schemas, read from the .avsc files beside this package (the single source of truth)
 * and shipped with it, so the SDKs work outside this repository.
 */
const DIR = resolve(import.meta.dirname, '..');

function load(file: string): Record<string, unknown> {
  return JSON.parse(readFileSync(resolve(DIR, file), 'utf8')) as Record<string, unknown>;
}

export const SCHEMAS = {
  jobEvent: load('job-event.avsc'),
  taskDispatch: load('task-dispatch.avsc'),
  taskResult: load('task-result.avsc'),
  dlqEntry: load('dlq-entry.avsc'),
  scheduleRequest: load('schedule-request.avsc'),
  scheduleRequestRejection: load('schedule-request-rejection.avsc'),
  scheduleRequestOutcome: load('schedule-request-outcome.avsc'),
  deadRecord: load('dead-record.avsc'),
  workerHeartbeat: load('worker-heartbeat.avsc'),
} as const;

export type SchemaName = keyof typeof SCHEMAS;

/** TS views of the records (timestamps are epoch milliseconds). */
export interface JobEventRecord {
  event_id: string;
  event_type: 'SCHEDULED' | 'CANCELLED';
  job_id: string;
  tenant_id: string;
  job_type: string;
  resource_class: string;
  payload: string;
  due_at: number;
  deadline_at: number | null;
  version: number;
  fence: number;
  attempt: number;
  max_attempts: number;
  routing_key: string;
  shard: number;
  occurred_at: number;
}

export interface TaskDispatchRecord {
  job_id: string;
  tenant_id: string;
  job_type: string;
  resource_class: string;
  payload: string;
  due_at: number;
  deadline_at: number | null;
  attempt: number;
  max_attempts: number;
  fence: number;
  epoch: number;
  shard: number;
  version: number;
  idempotency_key: string;
  dispatched_at: number;
}

export interface TaskResultRecord {
  job_id: string;
  tenant_id: string;
  attempt: number;
  fence: number;
  epoch: number;
  shard: number;
  /** STARTED reports that a worker claimed the attempt and runs it; the others are its outcome. */
  outcome: 'SUCCEEDED' | 'FAILED' | 'STARTED';
  error: TaskErrorRecord | null;
  worker_id: string;
  due_at: number;
  started_at: number;
  finished_at: number;
  /** The task's resource class; null or absent from workers older than it. */
  resource_class?: string | null;
  /** When the task was dispatched, ms; null or absent from workers older than it. */
  dispatched_at?: number | null;
}

/**
 * Why an attempt failed. `failure_class` is one of transient, throttled, permanent, ambiguous
 * (a string so new classes can be added); `retry_after_ms` is set for throttled failures. Results
 * written before these fields existed decode without them: readers treat that as ambiguous.
 */
export interface TaskErrorRecord {
  error_class: string;
  message: string;
  failure_class: string;
  retry_after_ms: number | null;
}

/** One failed attempt in a dead letter's error history. */
export interface DlqAttemptErrorRecord {
  attempt: number;
  fence: number;
  worker_id: string;
  error_class: string;
  failure_class: string;
  message: string;
  started_at: number;
  finished_at: number;
}

/** A job that failed for good, on kairos.dlq.<resource class> (key = job id). */
export interface DlqEntryRecord {
  event_id: string;
  job_id: string;
  tenant_id: string;
  job_type: string;
  resource_class: string;
  payload: string;
  due_at: number;
  attempts: number;
  max_attempts: number;
  failure_class: string;
  reason: 'permanent' | 'exhausted';
  error_history: DlqAttemptErrorRecord[];
  failed_at: number;
}

/** Avro namespace of the schedule-request records (union branches are named `<namespace>.<Name>`). */
export const REQUESTS_NAMESPACE = 'io.kairos.requests';

/** Retry policy of a create request; a null field takes the default. */
export interface RetryPolicyRecord {
  base_ms: number | null;
  cap_ms: number | null;
  jitter_ms: number | null;
}

export interface CreateJobRecord {
  type: string;
  resource_class: string;
  /** JSON text. */
  payload: string;
  due_at: number | null;
  delay_ms: number | null;
  deadline_at: number | null;
  max_attempts: number | null;
  retry: RetryPolicyRecord | null;
}

export interface CancelJobRecord {
  job_id: string;
}

export interface RescheduleJobRecord {
  job_id: string;
  due_at: number | null;
  delay_ms: number | null;
  deadline_at: number | null;
  clear_deadline: boolean;
}

/** What each run of a schedule is (a create's job fields, JSON payload text, and each run's deadline). */
export interface ScheduleJobTemplateRecord {
  type: string;
  resource_class: string;
  /** JSON text. */
  payload: string;
  max_attempts: number | null;
  retry: RetryPolicyRecord | null;
  deadline_ms: number | null;
}

/** Strings as the HTTP API takes them (the command handlers validate them): null takes the default. */
export interface DstPolicyRecord {
  gap: string | null;
  overlap: string | null;
}

export interface MisfirePolicyRecord {
  kind: string;
  max_count: number | null;
  window_ms: number | null;
}

/** A schedule's rules: the fields of POST /v1/schedules but the tenant and idempotency key. */
export interface ScheduleRulesRecord {
  cron: string;
  time_zone: string;
  start_at: number | null;
  end_at: number | null;
  job: ScheduleJobTemplateRecord;
  dst: DstPolicyRecord | null;
  misfire: MisfirePolicyRecord | null;
  overlap: string | null;
  jitter_ms: number | null;
  /** Added after the first version: a record of an older writer decodes with null. */
  sla_ms: number | null;
}

export type CreateScheduleRecord = ScheduleRulesRecord;

export interface UpdateScheduleRecord extends ScheduleRulesRecord {
  schedule_id: string;
  expected_version: number | null;
}

/** PauseSchedule, DeleteSchedule and TriggerSchedule name only their schedule. */
export interface ScheduleIdRecord {
  schedule_id: string;
}

export interface ResumeScheduleRecord extends ScheduleIdRecord {
  catch_up: boolean;
}

/**
 * The command union as Avro's JSON encoding has it: one key, the branch's full name. New commands
 * are added as new members at the end.
 */
export type ScheduleCommandRecord =
  | { 'io.kairos.requests.CreateJob': CreateJobRecord }
  | { 'io.kairos.requests.CancelJob': CancelJobRecord }
  | { 'io.kairos.requests.RescheduleJob': RescheduleJobRecord }
  | { 'io.kairos.requests.CreateSchedule': CreateScheduleRecord }
  | { 'io.kairos.requests.UpdateSchedule': UpdateScheduleRecord }
  | { 'io.kairos.requests.PauseSchedule': ScheduleIdRecord }
  | { 'io.kairos.requests.ResumeSchedule': ResumeScheduleRecord }
  | { 'io.kairos.requests.DeleteSchedule': ScheduleIdRecord }
  | { 'io.kairos.requests.TriggerSchedule': ScheduleIdRecord };

/** Short names of the job commands. */
export type JobCommandName = 'CreateJob' | 'CancelJob' | 'RescheduleJob';

/** Short names of the schedule commands. */
export type RecurringScheduleCommandName =
  | 'CreateSchedule'
  | 'UpdateSchedule'
  | 'PauseSchedule'
  | 'ResumeSchedule'
  | 'DeleteSchedule'
  | 'TriggerSchedule';

/** Short names of the commands (`CreateJob`…), as outcomes and rejections report them. */
export type ScheduleCommandName = JobCommandName | RecurringScheduleCommandName;

/** A command on schedule-requests (key = idempotency_key). */
export interface ScheduleRequestRecord {
  request_id: string;
  tenant: string;
  idempotency_key: string;
  command: ScheduleCommandRecord;
}

/** Why a schedule request was rejected (machine-readable; the field is a string so reasons can be added). */
export const REJECTION_REASONS = [
  /** Not Avro in the Confluent wire format, or the Avro body does not decode with its schema. */
  'UNDECODABLE',
  /** The schema id is not in the registry. */
  'UNKNOWN_SCHEMA',
  /** A schema that is not a version of schedule-requests-value (or cannot be read as one). */
  'WRONG_SCHEMA',
  /** A field failed validation (see `fields`). */
  'INVALID_FIELD',
  /** The due time is further in the past than the policy allows (24 h by default). */
  'DUE_TOO_FAR_IN_PAST',
  /** The payload is larger than the limit (64 KiB of JSON by default). */
  'PAYLOAD_TOO_LARGE',
  /** The tenant is not in the ingest's allow-list (KAIROS_TENANTS). */
  'UNKNOWN_TENANT',
  /** Cancel or reschedule of a job this tenant does not have. */
  'JOB_NOT_FOUND',
  /** Cancel of a finished job, or reschedule of a job that is no longer SCHEDULED. */
  'JOB_STATE_CONFLICT',
  /** A schedule command naming a schedule this tenant does not have. */
  'SCHEDULE_NOT_FOUND',
  /** A change of a DELETED schedule, or an update whose expected_version is not the schedule's. */
  'SCHEDULE_STATE_CONFLICT',
  /** The request kept failing unexpectedly while PostgreSQL answered; see the ingest's log. */
  'INTERNAL_ERROR',
] as const;
export type RejectionReason = (typeof REJECTION_REASONS)[number];

export interface RejectedFieldRecord {
  field: string;
  message: string;
}

export interface OriginalHeaderRecord {
  key: string;
  value: Buffer | null;
}

/** Where a record was read, and the record as it arrived (a rejection's or a dead record's). */
export interface SourceRecordFields {
  source_topic: string;
  source_partition: number;
  source_offset: number;
  source_timestamp: number;
  original_key: Buffer | null;
  original_headers: OriginalHeaderRecord[];
  original_value: Buffer | null;
}

/** A request that could not be applied, on schedule-requests.rejected (key = the original key). */
export interface ScheduleRequestRejectionRecord extends SourceRecordFields {
  rejection_id: string;
  reason: RejectionReason;
  message: string;
  fields: RejectedFieldRecord[];
  request_id: string | null;
  tenant: string | null;
  command: string | null;
  schema_id: number | null;
  rejected_at: number;
}

/** An applied request, on schedule-requests.replies (key = idempotency key). */
export interface ScheduleRequestOutcomeRecord {
  request_id: string;
  tenant: string;
  idempotency_key: string;
  command: string;
  job_id: string;
  state: string;
  duplicate: boolean;
  due_at: number;
  version: number;
  applied_at: number;
  /** Schedule commands' schedule (absent in outcomes written before the field existed). */
  schedule_id?: string | null;
  /** Schedule commands: the schedule's next fire time after the command, if it has one. */
  next_fire_at?: number | null;
}

/** Why a record of an internal topic was set aside (dead-record.avsc). */
export type DeadRecordReason =
  'UNDECODABLE' | 'UNKNOWN_SCHEMA' | 'WRONG_SCHEMA' | 'INVALID_FIELD' | 'UNAPPLICABLE';

/** A record its consumer could not apply, on kairos.dead-records (key = the record's own key). */
export interface DeadRecordRecord extends SourceRecordFields {
  dead_record_id: string;
  reason: DeadRecordReason;
  message: string;
  fields: { field: string; message: string }[];
  consumer: string;
  schema_id: number | null;
  dead_at: number;
}

/** A worker instance's heartbeat on kairos.workers (key = `<group_id>/<worker_id>`). */
export interface WorkerHeartbeatRecord {
  service: string;
  group_id: string;
  worker_id: string;
  host: string;
  pid: number;
  resource_classes: string[];
  job_types: string[];
  started_at: number;
  sent_at: number;
  interval_ms: number;
  /** It reads its service's own topics (absent from older workers: false). */
  service_topics: boolean;
}
