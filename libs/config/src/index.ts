export {
  kairosEnv,
  kafkaEnv,
  intVar,
  runMain,
  onShutdown,
  EnvError,
  kafkaClientOptions,
  registryOptions,
  redisOptions,
  type KairosEnv,
  type KafkaEnv,
} from './env.js';
export { scheduleEnv, type ScheduleEnv } from './schedule-env.js';
export { createGroupEnv, type CreateGroupEnv } from './create-group-env.js';
export { connectionsEnv, type ConnectionsEnv } from './connections-env.js';
export { apiEnv, httpAuthEnv, type ApiEnv, type HttpAuthEnv } from './api-env.js';
export { canaryEnv, type CanaryEnv } from './canary-env.js';
export { watchdogEnv, type WatchdogEnv } from './watchdog-env.js';
export { scheduleSlaEnv, type ScheduleSlaEnv } from './schedule-sla-env.js';
export { tracingEnv, type TracingEnv } from './tracing-env.js';
