export {
  JobCommands,
  type JobCommandsOptions,
  type CreateContext,
  type CommandContext,
  type CommandResult,
} from './job-commands.js';
export type { CreateResult } from './job-creates.js';
export {
  JOB_EVENTS_AGGREGATE,
  JOB_REENTERED,
  jobEventRecord,
  jobEventOutboxRow,
  dlqAggregate,
  dlqOutboxRow,
} from './events.js';
export {
  DEFAULT_GENERATION,
  createRuns,
  generateOccurrences,
  occurrenceJobRow,
  type GenerationDeps,
  type GenerationResult,
  type GenerationSettings,
} from './schedule-generation.js';
export { ScheduleCommands } from './schedule-commands.js';
export type { BackfillResult } from './schedule-backfill.js';
export type {
  PreviewResult,
  ScheduleChange,
  ScheduleChangeResult,
  ScheduleCommandsOptions,
  ScheduleContext,
  ScheduleCreateResult,
  TriggerResult,
} from './schedule-types.js';
export { Replays, type ReplaysOptions } from './replays.js';
export { LEASE_EXPIRED, lostAttemptResult } from './lost-attempts.js';
