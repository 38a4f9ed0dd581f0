import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { checkTls, type BreakerOptions, type TlsOptions } from '@kairos/core';
import {
  assertResourceClass,
  assertServiceName,
  DEFAULT_SESSION_TIMEOUT_MS,
  type RegistryAuth,
  type SaslOptions,
} from '@kairos/kafka';
import type { Registry } from 'prom-client';
import { checkReservedSlots, type ReservedSlots } from './slots.js';

/**
 * Minimal logger interface (pino, console-like adapters and the like fit it). Lines about a job
 * carry jobId, fence and traceparent: through `child` when the logger has it (pino), else merged
 * into each line.
 */
export interface WorkerLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
  child?(bindings: Record<string, unknown>): WorkerLogger;
}

export interface WorkerOptions {
  /** Kafka bootstrap brokers. Required. */
  readonly brokers: readonly string[];
  /** Confluent-compatible Schema Registry URL (Apicurio: `.../apis/ccompat/v7`). Required. */
  readonly registryUrl: string;
  /** Resource classes to take tasks from (`kairos.tasks.<class>`). Required, at least one. */
  readonly resourceClasses: readonly string[];
  /** TLS to the brokers: true (the system's CAs) or TLS options (`ca`, `cert`, `key`, `servername`…, PEM text). Default: off. */
  readonly ssl?: boolean | TlsOptions;
  /**
   * SASL with the brokers: `{ mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512', username,
   * password }` or `{ mechanism: 'oauthbearer', oauthBearerProvider }`. Default: none.
   */
  readonly sasl?: SaslOptions;
  /** Registry credentials: `{ username, password }` (basic; Confluent Cloud API keys) or `{ bearerToken }`. Default: none. */
  readonly registryAuth?: RegistryAuth;
  /** TLS of an https registry URL (a private CA, mutual TLS). Default: the system's CAs. */
  readonly registryTls?: TlsOptions;
  /** Handlers running at once (a finished handler's result is published outside its slot). Default: 10. */
  readonly concurrency?: number;
  /**
   * Slots of `concurrency` reserved per resource class, e.g. `{ critical: 6 }`: only that class's
   * tasks run on them, and they take them before the shared ones; the remaining slots are shared
   * by every class in arrival order. A class with a free reserved slot never waits behind other
   * classes' queued tasks, so a flood of `default` work cannot starve `critical` work. Each class
   * must be one of `resourceClasses`, each count a non-negative integer, and the total below
   * `concurrency` (at least one slot stays shared, so every class still runs). Default: none
   * (every slot shared, one queue in arrival order).
   */
  readonly reservedSlots?: Readonly<Record<string, number>>;
  /**
   * Consumer group. Default: `<topicPrefix>kairos-workers.<classes joined by +>`. Before it first
   * joins, a group starts each task-topic partition it has never committed on at the oldest
   * offset any other consumer group committed there, or from the beginning if none has: a new
   * group (new service, renamed group, changed classes) skips tasks the others have finished,
   * not tasks dispatched before any worker existed.
   */
  readonly groupId?: string;
  /**
   * The name of the service this worker runs in (`mailer`, `billing`). Given, the worker reads its
   * service's own task topics (`kairos.tasks.<class>.<service>`, created on start) and the delay
   * tier sends there only the job types the service's live workers handle: services sharing a
   * class never take each other's jobs. Lower case, digits and '-', 1-64, a letter first.
   * Default: none (the worker reads the class topics; `kairos workers` names it by its group).
   */
  readonly service?: string;
  /**
   * How often the worker says on `kairos.workers` that it runs (its service, group, classes and
   * job types), ms; silent for 3 of these, it is shown as not live. Default: 10,000.
   */
  readonly registryIntervalMs?: number;
  /**
   * A Prometheus registry (prom-client) to register the worker's metrics in: handler duration by
   * job type and outcome, tasks in flight, breaker state, lease renewal failures, zombie attempts.
   * One worker per registry: the metric names are fixed, so a second worker on the same registry
   * is refused by prom-client (serve several with a registry each). Default: none.
   */
  readonly metrics?: Registry;
  /** Prefix of every topic name (matches the deployment's). Default: ''. */
  readonly topicPrefix?: string;
  /** This worker's identity in results and attempts. Default: `<host>-<pid>-<random>`. */
  readonly workerId?: string;
  /** Partitions whose fetched batches are handed to the handler pool at once. Default: 16. */
  readonly partitionsConsumedConcurrently?: number;
  /**
   * Tasks taken from Kafka and not finished (queued, running, or waiting to be tried again; tasks
   * held for their due time are not counted) at which the worker stops fetching, until a quarter
   * of them are through. The worker holds about this many payloads in memory (plus one fetch):
   * lower it for large payloads. Default: concurrency × 64, at least 4,096, since a fully paused
   * consumer fetches again only after its fetch wait (a sixth of the session), and the buffer
   * must keep the handlers busy that long at full speed. With `reservedSlots` it is split like
   * the slots: a class with reserved slots pauses on its own share (its slots / concurrency), the
   * other classes together on the shared slots' share, so a flood never stops a reserved class
   * from being fetched.
   */
  readonly maxBufferedTasks?: number;
  /** Kafka consumer session timeout, ms: how soon a dead worker's undelivered tasks move on. Default: 6,000. */
  readonly sessionTimeoutMs?: number;
  /** How long stop() waits for running handlers before aborting them, ms. Default: 30,000. */
  readonly shutdownTimeoutMs?: number;
  /**
   * Redis of the delay tier (leases of running attempts live there). Required. Several
   * comma-separated URLs: the seed nodes of a Redis Cluster.
   */
  readonly redisUrl: string;
  /** Prefix of the delay tier's Redis keys (matches the deployment's). Default: ''. */
  readonly redisKeyPrefix?: string;
  /**
   * TLS to Redis beyond what a `rediss://` URL turns on (a private CA, a client certificate); an ACL
   * user and password go in the URL (`rediss://user:password@host:6380`). Default: none.
   */
  readonly redisTls?: TlsOptions;
  /**
   * Lease of a running attempt, ms: another worker may run it this long after we die or stall
   * (the reaper then reports it failed and it is retried). A handler that blocks the event loop
   * for longer than about two thirds of it misses its renewals and becomes a zombie; raise it for
   * such handlers. Default: 5,000.
   */
  readonly leaseMs?: number;
  /** How often a running attempt renews its lease, ms. Default: leaseMs / 3. */
  readonly heartbeatMs?: number;
  /**
   * What to do on learning that this worker is a zombie (its lease was reaped and the attempt runs
   * elsewhere with a higher fence): 'shutdown' stops the worker gracefully; 'continue' only aborts
   * that handler. Default: 'shutdown'.
   */
  readonly onZombie?: 'shutdown' | 'continue';
  /**
   * Circuit breaker per job type: opens when handlers keep throwing transient or throttled errors
   * (a failing dependency), then slowly starts again. false turns it off. Default: window 20,
   * minCalls 10, failureRatio 0.5, openMs 30,000, rampMs 30,000, initialShare 0.1.
   */
  readonly breaker?: BreakerOptions | false;
  /**
   * Retries (attempt > 1) spend from a budget that first attempts fill (`ratio` each) and that
   * trickles `minPerSecond` on its own. false turns it off. Default: ratio 0.2, max 100, minPerSecond 1.
   */
  readonly retryBudget?:
    { readonly ratio?: number; readonly max?: number; readonly minPerSecond?: number } | false;
  /** Default: a logger that drops everything. */
  readonly logger?: WorkerLogger;
}

export interface CompiledWorkerOptions {
  readonly brokers: readonly string[];
  readonly registryUrl: string;
  readonly ssl: boolean | TlsOptions | undefined;
  readonly sasl: SaslOptions | undefined;
  readonly registryAuth: RegistryAuth | undefined;
  readonly registryTls: TlsOptions | undefined;
  readonly redisTls: TlsOptions | undefined;
  readonly resourceClasses: readonly string[];
  readonly concurrency: number;
  readonly reservedSlots: ReservedSlots;
  readonly groupId: string;
  /** The given service name, else the group id (what `kairos workers` shows). */
  readonly service: string;
  /** A service was named: the worker reads its own task topics. */
  readonly serviceTopics: boolean;
  readonly registryIntervalMs: number;
  readonly metrics: Registry | undefined;
  readonly topicPrefix: string;
  readonly workerId: string;
  readonly partitionsConsumedConcurrently: number;
  readonly maxBufferedTasks: number;
  readonly shutdownTimeoutMs: number;
  readonly sessionTimeoutMs: number;
  readonly redisUrl: string;
  readonly redisKeyPrefix: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly onZombie: 'shutdown' | 'continue';
  readonly breaker: BreakerOptions | false;
  readonly retryBudget:
    { readonly ratio?: number; readonly max?: number; readonly minPerSecond?: number } | false;
  readonly logger: WorkerLogger;
}

/** Default buffer: this many tasks per handler slot, and at least MIN_BUFFERED_TASKS. */
const BUFFERED_PER_SLOT = 64;
const MIN_BUFFERED_TASKS = 4096;

const silent: WorkerLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

function checkService(service: string): string {
  try {
    return assertServiceName(service);
  } catch {
    throw new RangeError(
      `service must be lower case letters, digits and '-' (1-64, a letter first), got ${JSON.stringify(service)}`,
    );
  }
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1)
    throw new RangeError(`${name} must be a positive integer, got ${value}`);
  return value;
}

/** Validates options into their compiled form; every problem is a RangeError naming the option. */
export function compileWorkerOptions(o: WorkerOptions): CompiledWorkerOptions {
  if (!Array.isArray(o.brokers) || o.brokers.length === 0)
    throw new RangeError('brokers must name at least one broker');
  if (typeof o.registryUrl !== 'string' || !/^https?:\/\//.test(o.registryUrl)) {
    throw new RangeError(`registryUrl must be an http(s) URL, got ${String(o.registryUrl)}`);
  }
  if (!Array.isArray(o.resourceClasses) || o.resourceClasses.length === 0) {
    throw new RangeError('resourceClasses must name at least one resource class');
  }
  const classes = [...new Set(o.resourceClasses.map(assertResourceClass))].sort();
  if (
    typeof o.redisUrl !== 'string' ||
    !o.redisUrl.split(',').every((u) => /^rediss?:\/\/[^,\s]+$/.test(u.trim()))
  ) {
    throw new RangeError(
      `redisUrl must be a redis:// URL (or several, comma-separated, of a Redis Cluster), got ${String(o.redisUrl)}`,
    );
  }
  const leaseMs = positiveInt('leaseMs', o.leaseMs ?? 5_000);
  if (leaseMs < 100) throw new RangeError(`leaseMs must be at least 100, got ${leaseMs}`);
  const heartbeatMs = positiveInt('heartbeatMs', o.heartbeatMs ?? Math.floor(leaseMs / 3));
  if (heartbeatMs >= leaseMs)
    throw new RangeError(`heartbeatMs must be below leaseMs (${leaseMs}), got ${heartbeatMs}`);
  const onZombie = o.onZombie ?? 'shutdown';
  if (onZombie !== 'shutdown' && onZombie !== 'continue') {
    throw new RangeError(`onZombie must be 'shutdown' or 'continue', got ${String(onZombie)}`);
  }
  const prefix = o.topicPrefix ?? '';
  const named = o.service === undefined ? undefined : checkService(o.service);
  const groupId =
    o.groupId ??
    (named ? `${prefix}kairos-service.${named}` : `${prefix}kairos-workers.${classes.join('+')}`);
  const concurrency = positiveInt('concurrency', o.concurrency ?? 10);
  const maxBufferedTasks = positiveInt(
    'maxBufferedTasks',
    o.maxBufferedTasks ?? Math.max(concurrency * BUFFERED_PER_SLOT, MIN_BUFFERED_TASKS),
  );
  if (maxBufferedTasks < concurrency) {
    throw new RangeError(
      `maxBufferedTasks must be at least concurrency (${concurrency}), got ${maxBufferedTasks}`,
    );
  }
  return {
    brokers: o.brokers,
    registryUrl: o.registryUrl,
    ssl: o.ssl,
    sasl: o.sasl,
    registryAuth: o.registryAuth,
    registryTls: checkTls('registryTls', o.registryTls),
    redisTls: checkTls('redisTls', o.redisTls),
    resourceClasses: classes,
    concurrency,
    reservedSlots: checkReservedSlots(o.reservedSlots, classes, concurrency),
    groupId,
    service: named ?? groupId,
    serviceTopics: named !== undefined,
    registryIntervalMs: positiveInt('registryIntervalMs', o.registryIntervalMs ?? 10_000),
    metrics: o.metrics,
    topicPrefix: prefix,
    workerId: o.workerId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    partitionsConsumedConcurrently: positiveInt(
      'partitionsConsumedConcurrently',
      o.partitionsConsumedConcurrently ?? 16,
    ),
    maxBufferedTasks,
    shutdownTimeoutMs: positiveInt('shutdownTimeoutMs', o.shutdownTimeoutMs ?? 30_000),
    sessionTimeoutMs: positiveInt('sessionTimeoutMs', o.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS),
    redisUrl: o.redisUrl,
    redisKeyPrefix: o.redisKeyPrefix ?? '',
    leaseMs,
    heartbeatMs,
    onZombie,
    breaker: o.breaker ?? {},
    retryBudget: o.retryBudget ?? {},
    logger: o.logger ?? silent,
  };
}
