export {
  JobCommands,
  type JobCommandsOptions,
  type CreateResult,
  type CreateContext,
} from './job-commands.js';
export { JOB_EVENTS_AGGREGATE, jobEventRecord } from './events.js';
