export { Ingest, type IngestStats } from './ingest.js';
export type { IngestOptions } from './options.js';
