export {
  JobCommands,
  type JobCommandsOptions,
  type CreateResult,
  type CreateContext,
} from './job-commands.js';
export {
  JOB_EVENTS_AGGREGATE,
  jobEventRecord,
  jobEventOutboxRow,
  dlqAggregate,
  dlqOutboxRow,
} from './events.js';
