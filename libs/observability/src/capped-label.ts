/** Tenant names start with a letter or digit (see create-job), so this never collides with one. */
export const OTHER_TENANT = '_other';

/**
 * A label whose values are bounded: every label value is a separate time series in Prometheus,
 * kept in memory and on disk, and an unbounded set (tenants, schedules) grows without limit and
 * takes the server down. So only the first `limit` values seen get their own series; the rest
 * share `other`.
 */
export function cappedLabel(
  limit: number,
  other = OTHER_TENANT,
  name = 'label limit',
): (value: string) => string {
  if (!Number.isSafeInteger(limit) || limit < 0) {
    throw new RangeError(`${name} must be a non-negative integer, got ${limit}`);
  }
  const seen = new Set<string>();
  return (value) => {
    if (seen.has(value)) return value;
    if (seen.size >= limit) return other;
    seen.add(value);
    return value;
  };
}
