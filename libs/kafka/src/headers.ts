/** Header names every Kairos message carries where they apply (DESIGN.md section 5). */
export const HEADERS = {
  jobId: 'kairos-job-id',
  /** Outcomes of schedule commands: the schedule. */
  scheduleId: 'kairos-schedule-id',
  tenant: 'kairos-tenant',
  epoch: 'kairos-epoch',
  fence: 'kairos-fence',
  attempt: 'kairos-attempt',
  dueAt: 'kairos-due-at',
  traceparent: 'traceparent',
  /** Schedule requests, their outcomes and rejections: the producer's request id. */
  requestId: 'kairos-request-id',
  /** Rejections of schedule requests: the machine-readable reason. */
  rejectionReason: 'kairos-rejection-reason',
  /** Tasks given back for want of a handler: how many times this one was (absent: never). */
  returns: 'kairos-returns',
  /** Job events the outbox relay sent (`direct`); Debezium's copies have none. */
  relay: 'kairos-relay',
} as const;

export type HeaderName = (typeof HEADERS)[keyof typeof HEADERS];

/** Reads a header as a string whatever shape KafkaJS delivered it in. */
export function headerString(
  headers: Readonly<Record<string, Buffer | string | null | (Buffer | string)[] | undefined>> | undefined,
  name: string,
): string | undefined {
  const raw = headers?.[name];
  const value = Array.isArray(raw) ? raw[0] : raw;
  // A header written from a NULL column (Debezium) arrives with a null value.
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : value.toString('utf8');
}

/** Kafka headers as a list of key and bytes, each value of a repeated header its own entry. */
export function headerList(
  headers: Readonly<Record<string, Buffer | string | null | (Buffer | string)[] | undefined>> | undefined,
): { key: string; value: Buffer | null }[] {
  const out: { key: string; value: Buffer | null }[] = [];
  for (const [key, raw] of Object.entries(headers ?? {})) {
    for (const v of Array.isArray(raw) ? raw : [raw]) {
      out.push({ key, value: v === undefined || v === null ? null : Buffer.from(v) });
    }
  }
  return out;
}
