-- Kairos 0006: recurring schedules. A schedule is a rule; its runs are ordinary jobs, one per
-- occurrence, created ahead of time by the generator (apps/tracker) through the same job row +
-- outbox path as any job, all routed by the schedule id (one partition per schedule).

CREATE TABLE schedules (
  id                   uuid        PRIMARY KEY,
  tenant_id            text        NOT NULL,
  -- Per tenant: a repeated create with the same key returns the first schedule.
  idempotency_key      text,
  cron                 text        NOT NULL,
  time_zone            text        NOT NULL,
  start_at             timestamptz,
  end_at               timestamptz,
  -- type, resource_class, payload, max_attempts, retry {base_ms, cap_ms, jitter_ms}, deadline_ms
  job_template         jsonb       NOT NULL,
  dst_gap              text        NOT NULL CHECK (dst_gap IN ('shift', 'skip')),
  dst_overlap          text        NOT NULL CHECK (dst_overlap IN ('first', 'last', 'both')),
  -- {"kind": skip | fire_latest | fire_all | within, "max_count": n, "window_ms": n}
  misfire              jsonb       NOT NULL,
  misfire_tolerance_ms integer     NOT NULL CHECK (misfire_tolerance_ms >= 0),
  overlap              text        NOT NULL CHECK (overlap IN ('allow', 'skip', 'buffer_one', 'cancel_previous')),
  jitter_ms            integer     NOT NULL DEFAULT 0 CHECK (jitter_ms >= 0),
  state                text        NOT NULL CHECK (state IN ('ACTIVE', 'PAUSED', 'DELETED')),
  version              integer     NOT NULL DEFAULT 1,
  routing_key          text        NOT NULL,
  shard                integer     NOT NULL,
  -- The generation cursor: generation resumes strictly after (cursor_instant, cursor_nominal),
  -- the position of the last occurrence generated (nominal NULL: strictly after the instant).
  cursor_instant       timestamptz NOT NULL,
  cursor_nominal       text,
  -- Fire time (after jitter) of the last occurrence generated: the next never fires before it.
  last_fire_at         timestamptz,
  -- Instant of the first occurrence not generated yet (NULL: the schedule has no more).
  next_fire_at         timestamptz,
  -- When the generator must look at the schedule again (NULL: never, unless something changes).
  generate_at          timestamptz,
  -- Backfill runs requested so far are spaced until this time; the next backfill starts after it.
  backfill_next_at     timestamptz,
  -- Missed occurrences the misfire policy dropped before any job was created for them.
  misfires_skipped     bigint      NOT NULL DEFAULT 0,
  created_at           timestamptz NOT NULL DEFAULT now(),
  updated_at           timestamptz NOT NULL DEFAULT now(),
  paused_at            timestamptz,
  deleted_at           timestamptz
);

CREATE UNIQUE INDEX schedules_idempotency_idx ON schedules (tenant_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX schedules_tenant_idx ON schedules (tenant_id, id);
CREATE INDEX schedules_generate_idx ON schedules (generate_at) WHERE state = 'ACTIVE';

-- One row per occurrence that got a job: the primary key makes generating the same occurrence
-- twice a no-op (its id is a deterministic function of the schedule id and the nominal time).
-- Rows of occurrences cancelled by an update or a pause are deleted with the cancel, so the
-- occurrence can be generated again under the new rules.
CREATE TABLE schedule_occurrences (
  schedule_id      uuid        NOT NULL REFERENCES schedules (id),
  occurrence_id    uuid        NOT NULL,
  kind             text        NOT NULL CHECK (kind IN ('regular', 'catch_up', 'trigger', 'backfill')),
  -- Nominal wall time and zone, e.g. 2026-03-08T02:30:00[America/New_York] (NULL for a trigger).
  nominal          text,
  occurrence_at    timestamptz NOT NULL,
  fire_at          timestamptz NOT NULL,
  job_id           uuid        NOT NULL,
  schedule_version integer     NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (schedule_id, occurrence_id)
);
CREATE INDEX schedule_occurrences_at_idx ON schedule_occurrences (schedule_id, occurrence_at);

-- A job that runs an occurrence knows it. misfire_after: an undecided occurrence still SCHEDULED
-- after this time missed its time by more than the schedule's tolerance; the dispatcher leaves
-- it for the generator, which applies the misfire policy to every such run of the schedule at
-- once (NULL: not subject to it: one-time jobs, manual runs, runs the policy already chose).
ALTER TABLE jobs
  ADD COLUMN schedule_id     uuid,
  ADD COLUMN occurrence_id   uuid,
  ADD COLUMN occurrence_at   timestamptz,
  ADD COLUMN occurrence_kind text CHECK (occurrence_kind IN ('regular', 'catch_up', 'trigger', 'backfill')),
  ADD COLUMN misfire_after   timestamptz;

-- A schedule's runs, newest first (GET /v1/schedules/{id}/runs).
CREATE INDEX jobs_schedule_idx ON jobs (schedule_id, occurrence_at) WHERE schedule_id IS NOT NULL;
-- Its unfinished runs: overlap checks at dispatch, cancels on update, pause and delete.
CREATE INDEX jobs_schedule_live_idx ON jobs (schedule_id, occurrence_at)
  WHERE schedule_id IS NOT NULL AND state IN ('SCHEDULED', 'QUEUED', 'RUNNING');
-- Runs that missed their time and wait for the misfire decision.
CREATE INDEX jobs_misfire_idx ON jobs (misfire_after) WHERE state = 'SCHEDULED' AND misfire_after IS NOT NULL;
