import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { assertResourceClass } from '@kairos/kafka';

/** Minimal logger interface (pino, console-like adapters and the like fit it). */
export interface WorkerLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface WorkerOptions {
  /** Kafka bootstrap brokers. Required. */
  readonly brokers: readonly string[];
  /** Confluent-compatible Schema Registry URL (Apicurio: `.../apis/ccompat/v7`). Required. */
  readonly registryUrl: string;
  /** Resource classes to take tasks from (`kairos.tasks.<class>`). Required, at least one. */
  readonly resourceClasses: readonly string[];
  /** Handlers running at once. Default: 10. */
  readonly concurrency?: number;
  /** Consumer group. Default: `<topicPrefix>kairos-workers.<classes joined by +>`. */
  readonly groupId?: string;
  /** Prefix of every topic name (matches the deployment's). Default: ''. */
  readonly topicPrefix?: string;
  /** This worker's identity in results and attempts. Default: `<host>-<pid>-<random>`. */
  readonly workerId?: string;
  /** Partitions whose batches are worked on at once (each waits for its own tasks). Default: 16. */
  readonly partitionsConsumedConcurrently?: number;
  /** How long stop() waits for running handlers before aborting them, ms. Default: 30,000. */
  readonly shutdownTimeoutMs?: number;
  /** Default: a logger that drops everything. */
  readonly logger?: WorkerLogger;
}

export interface CompiledWorkerOptions {
  readonly brokers: readonly string[];
  readonly registryUrl: string;
  readonly resourceClasses: readonly string[];
  readonly concurrency: number;
  readonly groupId: string;
  readonly topicPrefix: string;
  readonly workerId: string;
  readonly partitionsConsumedConcurrently: number;
  readonly shutdownTimeoutMs: number;
  readonly logger: WorkerLogger;
}

const silent: WorkerLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

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
  const prefix = o.topicPrefix ?? '';
  return {
    brokers: o.brokers,
    registryUrl: o.registryUrl,
    resourceClasses: classes,
    concurrency: positiveInt('concurrency', o.concurrency ?? 10),
    groupId: o.groupId ?? `${prefix}kairos-workers.${classes.join('+')}`,
    topicPrefix: prefix,
    workerId: o.workerId ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`,
    partitionsConsumedConcurrently: positiveInt(
      'partitionsConsumedConcurrently',
      o.partitionsConsumedConcurrently ?? 16,
    ),
    shutdownTimeoutMs: positiveInt('shutdownTimeoutMs', o.shutdownTimeoutMs ?? 30_000),
    logger: o.logger ?? silent,
  };
}
