/**
 * Key layout of one job-events partition's hot state. Every key carries the hash tag `{p}`, so a
 * partition lives in one Redis Cluster slot and each script touches one slot.
 */
export interface PartitionKeys {
  readonly due: string;
  readonly jobs: string;
  readonly inflight: string;
  readonly epoch: string;
  version(jobId: string): string;
}

export function partitionKeys(prefix: string, partition: number): PartitionKeys {
  const base = `${prefix}kairos:{${partition}}`;
  return {
    due: `${base}:due`,
    jobs: `${base}:jobs`,
    inflight: `${base}:inflight`,
    epoch: `${base}:epoch`,
    version: (jobId) => `${base}:v:${jobId}`,
  };
}
