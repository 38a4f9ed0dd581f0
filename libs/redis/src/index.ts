export { withScripts, scriptSource, type KairosScripts, type ScriptName } from './scripts.js';
export { partitionKeys, type PartitionKeys } from './keys.js';
export { HotSet, type HotSetOptions, type PoppedJob } from './hot-set.js';
