/** Where the integration suites find the real services (the KAIROS_* variables' meaning). */
export interface Services {
  readonly pgUrl: string;
  readonly redisUrl: string;
  readonly kafkaBrokers: string;
  readonly registryUrl: string;
  readonly connectUrl: string;
  /** Partitions of kairos.job-events on this stack. */
  readonly jobEventPartitions: number;
  readonly source: 'environment' | 'testcontainers' | 'local stack';
}

declare module 'vitest' {
  export interface ProvidedContext {
    services: Services;
  }
}
