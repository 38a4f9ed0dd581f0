/** Policy limits for job creation, with their defaults. */
export interface JobLimitsOptions {
  /** Largest payload, as UTF-8 JSON bytes. Default: 65,536. */
  readonly maxPayloadBytes?: number;
  /** How far in the past a due time may be (it then runs at once). Default: 24 h. */
  readonly maxPastMs?: number;
  /** How far in the future a due time may be. Default: 5 years. */
  readonly maxFutureMs?: number;
  /** Upper bound for max_attempts. Default: 100. */
  readonly maxAttemptsCeiling?: number;
  /** max_attempts when a request gives none. Default: 3. */
  readonly defaultMaxAttempts?: number;
  /** Resource classes jobs may name. Default: critical, default, cpu, io. */
  readonly resourceClasses?: readonly string[];
  /** Most jobs in one batch request. Default: 1,000. */
  readonly maxBatch?: number;
}

export type JobLimits = Required<JobLimitsOptions>;

export function compileJobLimits(options: JobLimitsOptions = {}): JobLimits {
  const limits: JobLimits = {
    maxPayloadBytes: options.maxPayloadBytes ?? 65_536,
    maxPastMs: options.maxPastMs ?? 24 * 3600_000,
    maxFutureMs: options.maxFutureMs ?? 5 * 365 * 24 * 3600_000,
    maxAttemptsCeiling: options.maxAttemptsCeiling ?? 100,
    defaultMaxAttempts: options.defaultMaxAttempts ?? 3,
    resourceClasses: options.resourceClasses ?? ['critical', 'default', 'cpu', 'io'],
    maxBatch: options.maxBatch ?? 1000,
  };
  for (const [k, v] of Object.entries(limits)) {
    if (typeof v === 'number' && (!Number.isFinite(v) || v < 0))
      throw new RangeError(`${k} must be >= 0, got ${v}`);
  }
  if (limits.resourceClasses.length === 0) throw new RangeError('resourceClasses must not be empty');
  if (limits.defaultMaxAttempts < 1 || limits.defaultMaxAttempts > limits.maxAttemptsCeiling) {
    throw new RangeError('defaultMaxAttempts must be between 1 and maxAttemptsCeiling');
  }
  return limits;
}
