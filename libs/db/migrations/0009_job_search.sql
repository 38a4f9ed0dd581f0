-- Kairos 0009: job search (GET /v1/jobs, the dead-letter list). Searches are per tenant, newest
-- first, paged by (created_at, id); every filter is served by one of these indexes or filters rows
-- of one (no sequential scan). Kept to few indexes: each costs every insert and state change.

-- The failure class of the latest failed attempt (transient, throttled, permanent, ambiguous),
-- set by the tracker with last_error; NULL for a job that never failed.
ALTER TABLE jobs ADD COLUMN last_failure_class text;

-- Every search's order; created ranges; resource class, due and finished ranges as filters.
-- INCLUDE (state, resource_class): the counts by state and class read the index alone.
CREATE INDEX jobs_tenant_created_idx ON jobs (tenant_id, created_at DESC, id DESC);
CREATE INDEX jobs_tenant_state_idx ON jobs (tenant_id, state, created_at DESC, id DESC) INCLUDE (resource_class);
CREATE INDEX jobs_tenant_type_idx ON jobs (tenant_id, type, created_at DESC, id DESC);
-- Failed jobs only: small, and what the dead-letter list reads.
CREATE INDEX jobs_tenant_failure_idx ON jobs (tenant_id, last_failure_class, created_at DESC, id DESC)
  WHERE last_failure_class IS NOT NULL;
