-- Kairos 0001: one-time jobs, the outbox, attempts and partition epochs.
-- Released migrations are never edited; add a new numbered file instead.

-- One row per executable job. Range-partitioned by due_at: old months can be detached and
-- archived, and the (shard, due_at) index keeps pre-loading bounded and ordered.
CREATE TABLE jobs (
  id              uuid        NOT NULL,
  tenant_id       text        NOT NULL,
  idempotency_key text,
  type            text        NOT NULL,
  resource_class  text        NOT NULL,
  payload         jsonb       NOT NULL,
  due_at          timestamptz NOT NULL,
  deadline_at     timestamptz,
  state           text        NOT NULL CHECK (state IN ('SCHEDULED','QUEUED','RUNNING','SUCCEEDED','FAILED','CANCELLED','EXPIRED','SKIPPED')),
  version         integer     NOT NULL DEFAULT 1,
  fence           bigint      NOT NULL DEFAULT 1,
  attempt         integer     NOT NULL DEFAULT 1,
  max_attempts    integer     NOT NULL,
  routing_key     text        NOT NULL,
  shard           integer     NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  dispatched_at   timestamptz,
  started_at      timestamptz,
  finished_at     timestamptz,
  last_error      text,
  PRIMARY KEY (id, due_at)
) PARTITION BY RANGE (due_at);

-- Catches any due time outside the monthly partitions, so an insert never fails for lack of one.
CREATE TABLE jobs_default PARTITION OF jobs DEFAULT;

CREATE INDEX jobs_id_idx ON jobs (id);
CREATE INDEX jobs_shard_due_scheduled_idx ON jobs (shard, due_at) WHERE state = 'SCHEDULED';

-- Creates the monthly partitions covering [from_month, from_month + months). Idempotent.
CREATE FUNCTION kairos_ensure_job_partitions(from_month date, months integer) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  m date := date_trunc('month', from_month)::date;
  name text;
BEGIN
  FOR i IN 0 .. months - 1 LOOP
    name := format('jobs_%s', to_char(m, 'YYYY_MM'));
    IF to_regclass(format('%I.%I', current_schema(), name)) IS NULL THEN
      EXECUTE format('CREATE TABLE %I PARTITION OF jobs FOR VALUES FROM (%L) TO (%L)',
                     name, m, (m + interval '1 month')::date);
    END IF;
    m := (m + interval '1 month')::date;
  END LOOP;
END $$;

-- Per-tenant idempotency keys: a unique constraint on the partitioned jobs table would have to
-- include due_at, so the key lives in its own table.
CREATE TABLE job_idempotency (
  tenant_id       text        NOT NULL,
  idempotency_key text        NOT NULL,
  job_id          uuid        NOT NULL,
  due_at          timestamptz NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, idempotency_key)
);

-- Debezium Outbox Event Router layout. Rows are deleted in the inserting transaction; the WAL
-- keeps the insert for Debezium. Extra columns become Kafka headers.
CREATE TABLE outbox (
  id            uuid        PRIMARY KEY,
  aggregatetype text        NOT NULL,
  aggregateid   text        NOT NULL,
  type          text        NOT NULL,
  payload       bytea       NOT NULL,
  job_id        text        NOT NULL,
  tenant_id     text        NOT NULL,
  due_at        text        NOT NULL,
  traceparent   text,
  created_at    timestamptz NOT NULL DEFAULT now()
);

-- One row per attempt (job, fence): who ran it, how it ended, and when.
CREATE TABLE attempts (
  job_id        uuid        NOT NULL,
  fence         bigint      NOT NULL,
  attempt       integer     NOT NULL,
  epoch         bigint      NOT NULL,
  worker_id     text,
  outcome       text,
  error_class   text,
  error_message text,
  dispatched_at timestamptz,
  started_at    timestamptz,
  finished_at   timestamptz,
  PRIMARY KEY (job_id, fence)
);

-- The durable, monotonic epoch of each kairos.job-events partition's owner.
CREATE TABLE partition_epochs (
  partition  integer     PRIMARY KEY,
  epoch      bigint      NOT NULL,
  owner      text        NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
);
