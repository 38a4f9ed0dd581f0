/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/), the `traceparent` header:
 * `version-traceid-parentid-flags`, lowercase hex (2-32-16-2). A job carries one from its
 * creation to its last result, so every hop's log lines and spans join one trace.
 */
export interface TraceParent {
  /** 32 lowercase hex digits, not all zero. */
  readonly traceId: string;
  /** The caller's span: 16 lowercase hex digits, not all zero. */
  readonly parentId: string;
  /** 2 hex digits; bit 0 is `sampled`. */
  readonly flags: string;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

/**
 * The trace context of a `traceparent` header, or undefined when it is absent or malformed (a
 * bad header is treated as none: it never fails the request or the job). Follows the spec's
 * rules: version `ff` and all-zero ids are invalid; version 00 has nothing after the flags; a
 * later version may append fields, which are ignored.
 */
export function parseTraceparent(header: unknown): TraceParent | undefined {
  if (typeof header !== 'string' || header.length > 512) return undefined;
  const m = TRACEPARENT.exec(header.trim());
  if (!m) return undefined;
  const [, version, traceId, parentId, flags, rest] = m;
  if (!version || !traceId || !parentId || !flags) return undefined;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE_ID || parentId === ZERO_SPAN_ID) return undefined;
  return { traceId, parentId, flags };
}

/** A trace context as a version-00 `traceparent` header. */
export function formatTraceparent(t: TraceParent): string {
  return `00-${t.traceId}-${t.parentId}-${t.flags}`;
}

/** The header, normalized to version 00, or null when it is absent or malformed. */
export function validTraceparent(header: unknown): string | null {
  const t = parseTraceparent(header);
  return t ? formatTraceparent(t) : null;
}

/** The trace id of a header, or undefined when it is absent or malformed. */
export function traceIdOf(header: unknown): string | undefined {
  return parseTraceparent(header)?.traceId;
}

/** Fills a buffer with random bytes (injectable for tests). */
export type RandomFill = (bytes: Uint8Array) => void;

// Web Crypto's CSPRNG (global in Node): no I/O.
const cryptoFill: RandomFill = (bytes) => void globalThis.crypto.getRandomValues(bytes);

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));

/** Random bytes drawn in blocks: one CSPRNG call per 170 traces instead of two per trace. */
class RandomPool {
  readonly #buf = new Uint8Array(4096);
  #at = this.#buf.length;
  #fill: RandomFill | undefined;

  /** `bytes` random bytes as lowercase hex, never all zero (an all-zero id is invalid). */
  hex(bytes: number, fill: RandomFill): string {
    for (;;) {
      if (this.#at + bytes > this.#buf.length || fill !== this.#fill) {
        this.#fill = fill;
        fill(this.#buf);
        this.#at = 0;
      }
      let out = '';
      let zero = true;
      for (let i = this.#at; i < this.#at + bytes; i++) {
        const b = this.#buf[i] ?? 0;
        if (b !== 0) zero = false;
        out += HEX[b];
      }
      this.#at += bytes;
      if (!zero) return out;
    }
  }
}

const pool = new RandomPool();

/**
 * A new trace: a random trace id and parent id, flagged sampled. Kairos starts one for a job
 * created without a trace context, so every job's hops still correlate; it is the trace's root,
 * and sampled lets a worker that records spans keep its part.
 */
export function newTraceparent(fill: RandomFill = cryptoFill): string {
  return formatTraceparent({ traceId: pool.hex(16, fill), parentId: pool.hex(8, fill), flags: '01' });
}

/** The header if valid (normalized), else a new trace: what a job is created with. */
export function traceparentOrNew(header: unknown, fill: RandomFill = cryptoFill): string {
  return validTraceparent(header) ?? newTraceparent(fill);
}
