-- Kairos 0010: replays of dead letters, and re-runs of finished jobs, as new jobs.

-- The job this one replays or re-runs (a new job: fresh id, attempts, fence); NULL otherwise.
ALTER TABLE jobs ADD COLUMN replay_of uuid;

-- A replay: a selection of dead letters (FAILED jobs) of one tenant sent back through the
-- normal path at a rate. state: RUNNING → DONE | CANCELLED. The runner holding it heartbeats;
-- a replay whose heartbeat is stale is taken over (resumed) by another runner.
CREATE TABLE replays (
  id            uuid        PRIMARY KEY,
  tenant_id     text        NOT NULL,
  filter        jsonb       NOT NULL,
  rate_per_sec  integer     NOT NULL CHECK (rate_per_sec > 0),
  state         text        NOT NULL CHECK (state IN ('RUNNING', 'DONE', 'CANCELLED')),
  selected      integer     NOT NULL,
  replayed      integer     NOT NULL DEFAULT 0,
  created_by    text        NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now(),
  finished_at   timestamptz,
  owner         text,
  heartbeat_at  timestamptz
);
CREATE INDEX replays_tenant_idx ON replays (tenant_id, created_at DESC);
CREATE INDEX replays_running_idx ON replays (heartbeat_at) WHERE state = 'RUNNING';

-- The frozen selection: each job of a replay is replayed once (new_job_id set in the same
-- transaction that creates the new job), whatever is retried, resumed or crashes.
CREATE TABLE replay_items (
  replay_id   uuid        NOT NULL REFERENCES replays (id),
  job_id      uuid        NOT NULL,
  new_job_id  uuid,
  replayed_at timestamptz,
  PRIMARY KEY (replay_id, job_id)
);
CREATE INDEX replay_items_pending_idx ON replay_items (replay_id) WHERE new_job_id IS NULL;

-- Who did what to which replay, and with what result. Append-only: rows are never changed.
CREATE TABLE replay_audit (
  id         bigserial   PRIMARY KEY,
  replay_id  uuid        NOT NULL,
  action     text        NOT NULL,   -- created | resumed | cancelled | done
  actor      text        NOT NULL,   -- an API key id, or the runner's instance
  at         timestamptz NOT NULL DEFAULT now(),
  detail     jsonb       NOT NULL    -- the filter and counts at that moment
);
CREATE INDEX replay_audit_replay_idx ON replay_audit (replay_id, id);

CREATE FUNCTION kairos_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only', TG_TABLE_NAME;
END $$;
CREATE TRIGGER replay_audit_append_only BEFORE UPDATE OR DELETE ON replay_audit
  FOR EACH STATEMENT EXECUTE FUNCTION kairos_append_only();
