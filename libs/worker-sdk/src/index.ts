export { Worker, NO_HANDLER } from './worker.js';
export {
  KairosTaskError,
  TransientError,
  ThrottledError,
  PermanentError,
  describeFailure,
  parseRetryAfter,
  MAX_ERROR_MESSAGE_CHARS,
  type FailureClass,
} from './failures.js';
export type { WorkerOptions, WorkerLogger } from './options.js';
export { parseReservedSlots, type ReservedSlots } from './slots.js';
export type { Handler, TaskContext } from './context.js';
export { ZombieWriteSuppressed, JobCancelled } from './errors.js';
export {
  fencedEffect,
  fencedEffectsTableSql,
  type EffectPool,
  type EffectClient,
  type EffectAttempt,
  type FencedEffectOptions,
  type FencedEffectResult,
} from './fenced-effect.js';
