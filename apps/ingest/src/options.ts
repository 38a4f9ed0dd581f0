import { hostname } from 'node:os';
import type { JobCommands, ScheduleCommands } from '@kairos/commands';
import type { Pool } from '@kairos/db';
import { DEFAULT_SESSION_TIMEOUT_MS, type RegistryClient as Client, type TopicNames } from '@kairos/kafka';
import { silentLogger, type Logger } from '@kairos/observability';
import type { Kafka } from 'kafkajs';
import type { TenantSources } from './tenant-policy.js';

export interface IngestOptions {
  readonly kafka: Kafka;
  /** Schema registry client: reads the writer schemas of requests, registers outcome and rejection schemas. */
  readonly registry: Client;
  /** The command handlers (the HTTP API's): validation and the job + outbox transaction. */
  readonly commands: JobCommands;
  /** The schedule command handlers (the HTTP API's /v1/schedules). */
  readonly schedules: ScheduleCommands;
  /** The pool the commands use; probed to tell a poison request from an outage. */
  readonly pool: Pool;
  readonly topics: TopicNames;
  /** Consumer group, also the prefix of the transactional id. Default: `kairos-ingest`. */
  readonly groupId?: string;
  /**
   * This instance's name, the rest of the transactional id. Keep it stable across restarts: a new
   * producer with the same id fences the old one and aborts its open transaction at once.
   * Default: `<host>-<pid>`.
   */
  readonly instanceId?: string;
  /** Tenants allowed to send requests (others are rejected UNKNOWN_TENANT). Default: any tenant. */
  readonly tenants?: readonly string[];
  /** Which tenants each sender may name (a header or the key prefix says who sends). Default: no check. */
  readonly tenantSources?: TenantSources;
  /** Partitions whose batches are processed at once. Default: 2. */
  readonly partitionsConsumedConcurrently?: number;
  /** Most creates in one PostgreSQL transaction. Default: the commands' maxBatch (1,000). */
  readonly maxCreatesPerTransaction?: number;
  /** Unexpected failures of one request, PostgreSQL answering, before INTERNAL_ERROR. Default: 5. */
  readonly internalErrorAttempts?: number;
  /** First wait after a transient failure, ms; doubles up to maxBackoffMs. Default: 100. */
  readonly initialBackoffMs?: number;
  /** Longest wait between retries of a transient failure, ms. Default: 5,000. */
  readonly maxBackoffMs?: number;
  /** Kafka consumer session timeout, ms: how soon a dead ingest's partitions move on. Default: 6,000. */
  readonly sessionTimeoutMs?: number;
  readonly log?: Logger;
  /** Called when the consumer crashed for good or the producer was fenced (exit and restart). */
  readonly onFatal?: (err: Error) => void;
  /** Clock of outcome and rejection times. Default: the system clock. */
  readonly now?: () => Date;
}

export interface CompiledIngestOptions {
  readonly kafka: Kafka;
  readonly registry: Client;
  readonly commands: JobCommands;
  readonly schedules: ScheduleCommands;
  readonly pool: Pool;
  readonly topics: TopicNames;
  readonly groupId: string;
  readonly transactionalId: string;
  readonly tenants: ReadonlySet<string> | undefined;
  readonly tenantSources: TenantSources | undefined;
  readonly partitionsConsumedConcurrently: number;
  readonly maxCreatesPerTransaction: number;
  readonly internalErrorAttempts: number;
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  readonly sessionTimeoutMs: number;
  readonly log: Logger;
  readonly onFatal: (err: Error) => void;
  readonly now: () => Date;
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

/** Validates options into their compiled form; every problem is a RangeError naming the option. */
export function compileIngestOptions(o: IngestOptions): CompiledIngestOptions {
  const groupId = o.groupId ?? 'kairos-ingest';
  if (groupId === '') throw new RangeError('groupId must not be empty');
  const instanceId = o.instanceId ?? `${hostname()}-${process.pid}`;
  if (instanceId === '') throw new RangeError('instanceId must not be empty');
  if (o.tenants !== undefined && (o.tenants.length === 0 || o.tenants.some((t) => t.trim() === ''))) {
    throw new RangeError('tenants must name at least one tenant, none empty (leave it out to allow any)');
  }
  const maxBatch = o.commands.limits.maxBatch;
  const maxCreates = positiveInt('maxCreatesPerTransaction', o.maxCreatesPerTransaction ?? maxBatch);
  if (maxCreates > maxBatch) {
    throw new RangeError(`maxCreatesPerTransaction must be at most the commands' maxBatch (${maxBatch})`);
  }
  const initialBackoffMs = positiveInt('initialBackoffMs', o.initialBackoffMs ?? 100);
  const maxBackoffMs = positiveInt('maxBackoffMs', o.maxBackoffMs ?? 5_000);
  if (maxBackoffMs < initialBackoffMs) throw new RangeError('maxBackoffMs must be at least initialBackoffMs');
  return {
    kafka: o.kafka,
    registry: o.registry,
    commands: o.commands,
    schedules: o.schedules,
    pool: o.pool,
    topics: o.topics,
    groupId,
    transactionalId: `${groupId}-${instanceId}`,
    tenants: o.tenants && new Set(o.tenants),
    tenantSources: o.tenantSources,
    partitionsConsumedConcurrently: positiveInt(
      'partitionsConsumedConcurrently',
      o.partitionsConsumedConcurrently ?? 2,
    ),
    maxCreatesPerTransaction: maxCreates,
    internalErrorAttempts: positiveInt('internalErrorAttempts', o.internalErrorAttempts ?? 5),
    initialBackoffMs,
    maxBackoffMs,
    sessionTimeoutMs: positiveInt('sessionTimeoutMs', o.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS),
    log: o.log ?? silentLogger(),
    onFatal: o.onFatal ?? (() => undefined),
    now: o.now ?? (() => new Date()),
  };
}
