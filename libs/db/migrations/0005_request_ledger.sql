-- Kairos 0005: cancels and reschedules requested through schedule-requests apply at most once per
-- tenant and idempotency key. The key is claimed in the command's own transaction, so a request
-- delivered again (the ingest stopped after its transaction committed, before its offset did)
-- finds the row and changes nothing. Creates need no row here: job_idempotency dedupes them.
CREATE TABLE request_ledger (
  tenant_id       text        NOT NULL,
  idempotency_key text        NOT NULL,
  command         text        NOT NULL,
  job_id          uuid        NOT NULL,
  applied_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, idempotency_key)
);
