import { dispatcherCrash } from './dispatcher-crash.js';
import type { Drill } from './drill.js';
import { redisOom } from './redis-oom.js';
import { retryStorm } from './retry-storm.js';
import { midnightHerd } from './midnight-herd.js';
import { splitBrain } from './split-brain.js';
import { zombieWorker } from './zombie-worker.js';

/** Every drill, by name (`npm run drill -- <name>`). */
export const DRILLS: readonly Drill[] = [
  dispatcherCrash,
  splitBrain,
  zombieWorker,
  retryStorm,
  redisOom,
  midnightHerd,
];
