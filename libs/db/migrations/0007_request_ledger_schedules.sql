-- Kairos 0007: schedule commands requested through schedule-requests (update, pause, resume,
-- delete, trigger) apply at most once per tenant and idempotency key too, in the same ledger as
-- cancels and reschedules: an entry names the schedule it changed, the job it concerns, or both (a
-- trigger: the schedule and the run it created). Creates of schedules need no row here: the
-- schedules' own idempotency keys dedupe them.
ALTER TABLE request_ledger
  ADD COLUMN schedule_id uuid,
  ALTER COLUMN job_id DROP NOT NULL,
  ADD CONSTRAINT request_ledger_target CHECK (job_id IS NOT NULL OR schedule_id IS NOT NULL);
