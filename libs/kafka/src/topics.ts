/**
 * The one topic catalogue. Every Kairos topic, its partition count and its configs are defined
 * here; the stack CLI creates them, apps and tests derive names from it. A `prefix` namespaces
 * every name so tests (and several deployments on one cluster) never collide.
 */

/** Resource classes that get a task topic and a DLQ unless a deployment configures others. */
export const DEFAULT_RESOURCE_CLASSES = ['critical', 'default', 'cpu', 'io'] as const;

export interface TopicSpec {
  readonly name: string;
  readonly partitions: number;
  /** Copies of each partition. Default (absent): 1. */
  readonly replicationFactor?: number;
  readonly configs: Readonly<Record<string, string>>;
  readonly purpose: string;
}

export interface CatalogueOptions {
  /** Prepended to every topic name. Default: '' (production names). */
  readonly prefix?: string;
  /** Resource classes to create task and DLQ topics for. Default: DEFAULT_RESOURCE_CLASSES. */
  readonly resourceClasses?: readonly string[];
  /**
   * Partitions of `kairos.job-events`. The PostgreSQL shard of a job is murmur2(routing key) mod
   * this number, so it must never change for an existing deployment. Default: 8.
   */
  readonly jobEventPartitions?: number;
  /**
   * Copies of each partition. 1 suits one broker (the local stack); a production cluster wants 3.
   * Default: 1.
   */
  readonly replicationFactor?: number;
  /**
   * `min.insync.replicas` of every topic: with acks=all, a write fails unless this many copies
   * have it (2 with a replication factor of 3). Default: the broker's setting.
   */
  readonly minInsyncReplicas?: number;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const HOUR_MS = 60 * 60 * 1000;
const RESOURCE_CLASS_RE = /^[a-z][a-z0-9-]{0,31}$/;

export interface TopicNames {
  readonly scheduleRequests: string;
  readonly scheduleRequestsRejected: string;
  readonly scheduleRequestsReplies: string;
  readonly jobEvents: string;
  readonly taskResults: string;
  /** The outbox connector's heartbeats (their insert time, ms, as text): outbox publication lag. */
  readonly heartbeat: string;
  /** Records of internal topics their consumer could not apply, with the reason (dead-record.avsc). */
  readonly deadRecords: string;
  /** Worker instances' heartbeats (worker-heartbeat.avsc; compacted, key = `<group>/<worker>`). */
  readonly workers: string;
  tasks(resourceClass: string): string;
  /** The tasks of a class for one service that reads topics of its own (routing by job type). */
  serviceTasks(resourceClass: string, service: string): string;
  /** Tasks of a class no live worker handles yet: the delay tier routes them once one does. */
  waiting(resourceClass: string): string;
  dlq(resourceClass: string): string;
}

export function topicNames(prefix = ''): TopicNames {
  return {
    scheduleRequests: `${prefix}schedule-requests`,
    scheduleRequestsRejected: `${prefix}schedule-requests.rejected`,
    scheduleRequestsReplies: `${prefix}schedule-requests.replies`,
    jobEvents: `${prefix}kairos.job-events`,
    taskResults: `${prefix}kairos.task-results`,
    heartbeat: `${prefix}kairos.heartbeat`,
    deadRecords: `${prefix}kairos.dead-records`,
    workers: `${prefix}kairos.workers`,
    tasks: (rc) => `${prefix}kairos.tasks.${assertResourceClass(rc)}`,
    serviceTasks: (rc, service) =>
      `${prefix}kairos.tasks.${assertResourceClass(rc)}.${assertServiceName(service)}`,
    waiting: (rc) => `${prefix}kairos.waiting.${assertResourceClass(rc)}`,
    dlq: (rc) => `${prefix}kairos.dlq.${assertResourceClass(rc)}`,
  };
}

const SERVICE_RE = /^[a-z][a-z0-9-]{0,63}$/;

/** A service with topics of its own names them: lower case, digits and '-', 1-64, a letter first. */
export function assertServiceName(service: string): string {
  if (!SERVICE_RE.test(service)) {
    throw new RangeError(`service "${service}" must match ${SERVICE_RE.source} to name its topics`);
  }
  return service;
}

export function assertResourceClass(rc: string): string {
  if (!RESOURCE_CLASS_RE.test(rc)) {
    throw new RangeError(`resource class "${rc}" must match ${RESOURCE_CLASS_RE.source}`);
  }
  return rc;
}

export function topicCatalogue(options: CatalogueOptions = {}): TopicSpec[] {
  const names = topicNames(options.prefix ?? '');
  const classes = options.resourceClasses ?? DEFAULT_RESOURCE_CLASSES;
  const jobEventPartitions = options.jobEventPartitions ?? 8;
  const week = String(7 * DAY_MS);
  const durability = catalogueDurability(options);
  const specs: TopicSpec[] = [
    {
      name: names.scheduleRequests,
      partitions: 4,
      configs: { 'retention.ms': week },
      purpose: 'producers → ingest: create/cancel/reschedule commands (Avro)',
    },
    {
      name: names.scheduleRequestsRejected,
      partitions: 1,
      configs: { 'retention.ms': String(30 * DAY_MS) },
      purpose: 'ingest → producers: rejected requests with reason and original bytes',
    },
    {
      name: names.scheduleRequestsReplies,
      partitions: 4,
      configs: { 'retention.ms': String(DAY_MS) },
      purpose: 'ingest → producers: accepted requests with job id and state',
    },
    {
      name: names.jobEvents,
      partitions: jobEventPartitions,
      configs: { 'retention.ms': week },
      purpose: 'Debezium outbox router → delay-tier, tracker (key = routing key)',
    },
    {
      name: names.taskResults,
      partitions: 4,
      configs: { 'retention.ms': week },
      purpose: 'workers → tracker: attempt results tagged with epoch, fence and attempt',
    },
    {
      name: names.heartbeat,
      partitions: 1,
      configs: { 'retention.ms': String(HOUR_MS) },
      purpose: "Debezium's heartbeat action (an outbox row every 5 s) → tracker: outbox publication lag",
    },
    {
      name: names.deadRecords,
      partitions: 1,
      configs: { 'retention.ms': String(90 * DAY_MS) },
      purpose: 'delay-tier, tracker → operators: internal records set aside as unappliable, with the reason',
    },
    {
      name: names.workers,
      partitions: 1,
      // Compacted: the last heartbeat of each worker instance stays; a clean stop's tombstone goes.
      configs: { 'cleanup.policy': 'compact', 'min.compaction.lag.ms': String(HOUR_MS) },
      purpose: 'workers → API, CLI: which services run, their groups, classes and job types',
    },
  ];
  for (const rc of classes) {
    specs.push({
      name: names.tasks(rc),
      partitions: 4,
      configs: { 'retention.ms': week },
      purpose: `delay-tier → workers of resource class ${rc}`,
    });
    specs.push({
      name: names.waiting(rc),
      partitions: 4,
      configs: { 'retention.ms': week },
      purpose: `delay-tier, workers → delay-tier: tasks of class ${rc} no live worker handles yet`,
    });
    specs.push({
      name: names.dlq(rc),
      partitions: 1,
      configs: { 'retention.ms': String(90 * DAY_MS) },
      purpose: `tracker → replay tooling: dead letters of resource class ${rc}`,
    });
  }
  return specs.map((spec) => ({
    ...spec,
    replicationFactor: durability.replicationFactor,
    configs: { ...spec.configs, ...durability.configs },
  }));
}

function catalogueDurability(o: CatalogueOptions): {
  replicationFactor: number;
  configs: Record<string, string>;
} {
  const rf = o.replicationFactor ?? 1;
  if (!Number.isInteger(rf) || rf < 1 || rf > 32)
    throw new RangeError(`replicationFactor must be an integer from 1 to 32, got ${rf}`);
  const isr = o.minInsyncReplicas;
  if (isr === undefined) return { replicationFactor: rf, configs: {} };
  if (!Number.isInteger(isr) || isr < 1 || isr > rf)
    throw new RangeError(
      `minInsyncReplicas must be an integer from 1 to the replication factor (${rf}), got ${isr}`,
    );
  return { replicationFactor: rf, configs: { 'min.insync.replicas': String(isr) } };
}
