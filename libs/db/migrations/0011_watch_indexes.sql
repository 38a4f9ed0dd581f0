-- Kairos 0011: what the tracker's gauges and reconciliation watchdog read, each from an index
-- alone, never a scan of the jobs' history. Kept to the fewest indexes: each costs writes.

-- SCHEDULED jobs by class (counts, the oldest overdue, the load forecast) from the same partial
-- index the pre-loader reads: resource_class INCLUDEd replaces the old one, so no index is added.
CREATE INDEX jobs_shard_due_scheduled_cls_idx ON jobs (shard, due_at) INCLUDE (resource_class, tenant_id)
  WHERE state = 'SCHEDULED';
DROP INDEX jobs_shard_due_scheduled_idx;

-- Live attempts (QUEUED, RUNNING): as many as are in flight, what the watchdog checks for
-- progress and leases and the gauges count by class.
CREATE INDEX jobs_live_idx ON jobs (state, resource_class, updated_at) INCLUDE (tenant_id)
  WHERE state IN ('QUEUED', 'RUNNING');

-- Dead letters held in PostgreSQL (the DLQ depth gauge), by class.
CREATE INDEX jobs_failed_class_idx ON jobs (resource_class) WHERE state = 'FAILED';
