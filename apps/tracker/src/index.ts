export { Tracker, type TrackerOptions } from './tracker.js';
export {
  ScheduleGenerator,
  type GeneratorTick,
  type ScheduleGeneratorOptions,
} from './schedule-generator.js';
