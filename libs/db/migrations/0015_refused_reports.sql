-- Kairos 0015: the worker reports (starts and results) the tracker refused to apply, for the audit
-- trail. A report is applied only to the attempt current in PostgreSQL; one for an unknown job, a
-- fence ahead of its job's, an attempt that already finished or a terminal job changes nothing and
-- lands here instead (libs/db/src/refused-reports.ts).
-- Append-only and bounded: the statement that adds refusals also deletes up to twice as many rows
-- older than 7 days (nothing else prunes audit tables), through the received_at index.
CREATE TABLE refused_reports (
  job_id      uuid        NOT NULL,
  fence       bigint      NOT NULL,
  kind        text        NOT NULL CHECK (kind IN ('start', 'result')),
  worker_id   text,
  -- A result's outcome (SUCCEEDED | FAILED); NULL for a start.
  outcome     text,
  -- job_unknown | fence_ahead | attempt_finished | job_terminal | attempt_superseded (a start)
  reason      text        NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX refused_reports_received_at_idx ON refused_reports (received_at);
