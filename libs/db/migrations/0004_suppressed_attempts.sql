-- Kairos 0004: a result whose fence is older than its job's current fence (a zombie attempt's late
-- commit) changes no job row; its attempt row is kept, marked suppressed, for the audit trail.
ALTER TABLE attempts ADD COLUMN suppressed boolean NOT NULL DEFAULT false;
