export {
  JobCommands,
  type JobCommandsOptions,
  type CreateResult,
  type CreateContext,
  type CommandContext,
  type CommandResult,
} from './job-commands.js';
export {
  JOB_EVENTS_AGGREGATE,
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
export { OccurrenceGate, type GateOutcome, type OccurrenceGateOptions } from './occurrence-gate.js';
export {
  ScheduleCommands,
  type BackfillResult,
  type PreviewResult,
  type ScheduleCommandsOptions,
  type ScheduleContext,
  type ScheduleCreateResult,
  type TriggerResult,
} from './schedule-commands.js';
