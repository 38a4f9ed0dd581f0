export { KairosClient } from './client.js';
export type { KairosClientOptions, ClientLogger } from './options.js';
export { OutcomeTimeoutError, type RequestOutcome } from './outcomes.js';
export type {
  Instant,
  RequestEnvelope,
  RetryOptions,
  ScheduleJob,
  CancelJob,
  RescheduleJob,
  SentRequest,
} from './requests.js';
export type {
  CreateSchedule,
  MisfirePolicy,
  ResumeSchedule,
  ScheduleJobTemplate,
  ScheduleRules,
  ScheduleTarget,
  UpdateSchedule,
} from './schedule-requests.js';
export { REJECTION_REASONS, type RejectionReason } from '@kairos/schemas';
