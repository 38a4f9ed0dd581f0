-- Kairos 0014: what the console's overview reads (GET /v1/overview), each from an index.

-- Due → dispatch lag per minute, resource class and delay-tier instance: a histogram over fixed
-- log-spaced upper bounds (LAG_HISTORY_BOUNDS_MS in libs/core; changing them needs a new table).
-- `buckets` holds per-bucket (not cumulative) counts, one more than the bounds (the last is
-- everything above the largest bound). Each instance upserts its own rows in batches (at most one
-- statement every ~10 s, none while idle); readers sum the buckets of every instance. A chart, not
-- a record: rows older than a day are pruned, and a crash loses at most the last unflushed seconds.
CREATE TABLE dispatch_lag_minutes (
  minute         timestamptz      NOT NULL,
  resource_class text             NOT NULL,
  instance       text             NOT NULL,
  buckets        bigint[]         NOT NULL,
  count          bigint           NOT NULL,
  sum_ms         double precision NOT NULL,
  max_ms         double precision NOT NULL,
  PRIMARY KEY (minute, resource_class, instance)
);

-- Since when the owner runs the partition from PostgreSQL alone (Redis out of memory); NULL when
-- it runs from its hot set. Written by the owner under its epoch; a new epoch clears it.
ALTER TABLE partition_epochs ADD COLUMN postgres_only_since timestamptz;

-- Dead letters by class and tenant from the index alone (the overview counts per tenant):
-- tenant_id INCLUDEd replaces the class-only index, so no index is added.
CREATE INDEX jobs_failed_class_tenant_idx ON jobs (resource_class) INCLUDE (tenant_id) WHERE state = 'FAILED';
DROP INDEX jobs_failed_class_idx;
