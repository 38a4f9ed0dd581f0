-- Kairos 0013: each job keeps its W3C trace context, so every attempt (retries included) and
-- every pre-load from PostgreSQL dispatches with the trace the job was created in.

-- NULL for jobs created before this migration (their events carry the request's, if any).
ALTER TABLE jobs ADD COLUMN traceparent text;
