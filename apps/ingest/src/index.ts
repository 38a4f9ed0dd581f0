export { Ingest, type IngestStats } from './ingest.js';
export type { IngestOptions } from './options.js';
export { parseTenantSources, type TenantSources } from './tenant-policy.js';
