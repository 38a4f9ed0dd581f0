export { Tracker, type TrackerOptions } from './tracker.js';
export {
  ScheduleGenerator,
  type GeneratorTick,
  type ScheduleGeneratorOptions,
} from './schedule-generator.js';
export { Canary, type CanaryOptions, type AlertNotifier } from './canary.js';
export { alertWebhook } from './alert-webhook.js';
export { ScheduleSla, type ScheduleSlaOptions } from './schedule-sla.js';
export { OutboxHeartbeat, type OutboxHeartbeatOptions } from './outbox-heartbeat.js';
