export { Worker, NO_HANDLER } from './worker.js';
export type { WorkerOptions, WorkerLogger } from './options.js';
export type { Handler, TaskContext } from './context.js';
