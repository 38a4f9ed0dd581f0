import type { FieldError } from '@kairos/core';

/**
 * Converts request fields into the HTTP API's shapes, collecting what Avro cannot carry as the API
 * does (JSON text that does not parse, a time Date cannot hold) as field errors; everything else
 * is left to the command handlers' own validation.
 */
export class FieldReader {
  readonly errors: FieldError[] = [];

  /** Epoch ms as ISO-8601 (UTC), undefined for null. */
  time(field: string, ms: number | null): string | undefined {
    if (ms === null) return undefined;
    const d = new Date(ms);
    if (Number.isNaN(d.getTime())) {
      this.errors.push({ field, message: `${ms} ms since the epoch is not a representable time` });
      return undefined;
    }
    return d.toISOString();
  }

  /** JSON text parsed. */
  json(field: string, text: string): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch (err) {
      this.errors.push({ field, message: `not JSON text: ${(err as Error).message}` });
      return undefined;
    }
  }
}

/** A plain copy of a record without its null fields (null in Avro: absent in the HTTP body). */
export function withoutNulls(o: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null));
}

/** Sets `body[field] = value` unless the value is null or undefined (absent: the default). */
export function setPresent(body: Record<string, unknown>, field: string, value: unknown): void {
  if (value !== null && value !== undefined) body[field] = value;
}
