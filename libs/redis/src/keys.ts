/**
 * Key layout of one job-events partition's hot state. Every key carries the hash tag `{p}`, so a
 * partition lives in one Redis Cluster slot and each script touches one slot. Per-class,
 * per-tenant queues are derived inside the scripts from `base` (same slot): they are what makes
 * release fair across tenants and keeps one class from waiting behind another.
 */
export interface PartitionKeys {
  /** Prefix of the derived keys: `<base>:q:<class>:<tenant>` and `<base>:ready:<class>`. */
  readonly base: string;
  readonly jobs: string;
  readonly inflight: string;
  readonly epoch: string;
  /** The epoch the partition's attempts were restored under after Redis lost them (restore-attempts.lua). */
  readonly since: string;
  /** SET of the resource classes that have queues in this partition. */
  readonly classes: string;
  /** ZSET of running attempts' lease expiries. */
  readonly leases: string;
  version(jobId: string): string;
  /** The job's latest claimed attempt: `<fence>|<state>|<worker>`. */
  attempt(jobId: string): string;
  queue(resourceClass: string, tenant: string): string;
  ready(resourceClass: string): string;
}

export function partitionKeys(prefix: string, partition: number): PartitionKeys {
  const base = `${prefix}kairos:{${partition}}`;
  return {
    base,
    jobs: `${base}:jobs`,
    inflight: `${base}:inflight`,
    epoch: `${base}:epoch`,
    since: `${base}:since`,
    classes: `${base}:classes`,
    leases: `${base}:leases`,
    version: (jobId) => `${base}:v:${jobId}`,
    attempt: (jobId) => `${base}:a:${jobId}`,
    queue: (resourceClass, tenant) => `${base}:q:${resourceClass}:${tenant}`,
    ready: (resourceClass) => `${base}:ready:${resourceClass}`,
  };
}
