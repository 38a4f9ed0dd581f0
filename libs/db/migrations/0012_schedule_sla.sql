-- Kairos 0012: the dead-man's switch of schedules. A schedule may say how late after its fire
-- time a run may succeed (sla_ms); the tracker judges each run once that time has passed.

-- sla_since: when sla_ms was last set or changed; runs that fired before it are never judged
-- (setting an SLA on an old schedule does not page for its history).
ALTER TABLE schedules
  ADD COLUMN sla_ms    integer CHECK (sla_ms > 0),
  ADD COLUMN sla_since timestamptz;

-- What happened to a schedule's runs, one row per schedule that has had any. Its own table, not
-- columns of schedules: the tracker, the dispatcher and the SLA check write it inside batches that
-- already hold job rows, and must never wait behind the schedule row, which the generator and the
-- commands hold while they lock those same jobs. For the same reason no foreign key (its check
-- would take a share lock on the schedule row); schedules are never deleted, only marked DELETED.
CREATE TABLE schedule_health (
  schedule_id                uuid        PRIMARY KEY,
  -- The newest run that SUCCEEDED: when it finished, and its occurrence time.
  last_success_at            timestamptz,
  last_success_occurrence_at timestamptz,
  -- Runs judged late: not SUCCEEDED within sla_ms of their fire time (each counted once).
  late_runs                  bigint      NOT NULL DEFAULT 0,
  -- Occurrence time of the newest run judged late: the schedule is late until a run of a later
  -- occurrence succeeds.
  late_occurrence_at         timestamptz,
  -- Runs are judged in fire-time order: those that fired at or before this have been.
  sla_judged_until           timestamptz,
  -- Runs the misfire policy skipped (occurrences dropped before any job: schedules.misfires_skipped).
  misfired_runs              bigint      NOT NULL DEFAULT 0,
  -- Runs the overlap policy skipped, or skipped because the schedule was paused.
  skipped_runs               bigint      NOT NULL DEFAULT 0
);
-- The schedules in breach, for the SLA check's every round.
CREATE INDEX schedule_health_late_idx ON schedule_health (schedule_id)
  WHERE late_occurrence_at > COALESCE(last_success_occurrence_at, '-infinity');

-- The SLA check walks a schedule's runs in fire-time order.
CREATE INDEX schedule_occurrences_fire_idx ON schedule_occurrences (schedule_id, fire_at);

-- The schedules the SLA check watches.
CREATE INDEX schedules_sla_idx ON schedules (id) WHERE sla_ms IS NOT NULL AND state = 'ACTIVE';
