import type { JobLimits } from '@kairos/core';
import type { Pool } from '@kairos/db';
import type { AvroCodec } from '@kairos/kafka';

/** What every command handler (jobs and schedules) validates with and writes to. */
export interface HandlerOptions {
  readonly pool: Pool;
  readonly codec: AvroCodec;
  /** Topic the connector routes job events to (its `-value` subject holds the schema). */
  readonly jobEventsTopic: string;
  /**
   * Partitions of that topic: shard = murmur2(routing key) mod this (a one-time job's routing key
   * is its id, a schedule's runs' is the schedule id).
   */
  readonly jobEventPartitions: number;
  readonly limits: JobLimits;
  /** Clock (due-time arithmetic, validation against now). Default: the system clock. */
  readonly now?: () => Date;
}
