-- Kairos 0002: creating a monthly partition must succeed even when the default partition already
-- holds jobs due in that month (a job far in the future arrived before its month existed). The
-- rows move into the new month's table, which is then attached; all in the caller's transaction.
CREATE OR REPLACE FUNCTION kairos_ensure_job_partitions(from_month date, months integer) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
  m date := date_trunc('month', from_month)::date;
  next_m date;
  name text;
BEGIN
  FOR i IN 0 .. months - 1 LOOP
    name := format('jobs_%s', to_char(m, 'YYYY_MM'));
    next_m := (m + interval '1 month')::date;
    IF to_regclass(format('%I.%I', current_schema(), name)) IS NULL THEN
      EXECUTE format('CREATE TABLE %I (LIKE jobs INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name);
      EXECUTE format('WITH moved AS (DELETE FROM jobs_default WHERE due_at >= %L AND due_at < %L RETURNING *)
                      INSERT INTO %I SELECT * FROM moved', m, next_m, name);
      EXECUTE format('ALTER TABLE jobs ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', name, m, next_m);
    END IF;
    m := next_m;
  END LOOP;
END $$;
