-- Kairos 0003: a retry policy per job, and the failure class of each attempt.
-- Defaults are DEFAULT_RETRY_POLICY of libs/core (retry.ts): existing jobs get it.

-- Backoff of the retry after attempt n: min(cap, base * 2^(n-1) + random(0, jitter)) ms.
-- max_attempts (0001) bounds the attempts.
ALTER TABLE jobs
  ADD COLUMN retry_base_ms   integer NOT NULL DEFAULT 1000,
  ADD COLUMN retry_cap_ms    integer NOT NULL DEFAULT 300000,
  ADD COLUMN retry_jitter_ms integer NOT NULL DEFAULT 1000,
  ADD CONSTRAINT jobs_retry_policy_check
    CHECK (retry_base_ms >= 0 AND retry_jitter_ms >= 0 AND retry_cap_ms >= retry_base_ms);

-- transient | throttled | permanent | ambiguous, as the worker reported it; and for throttled
-- failures the Retry-After it reported. Both stay NULL for successful attempts.
ALTER TABLE attempts
  ADD COLUMN failure_class  text,
  ADD COLUMN retry_after_ms bigint;
