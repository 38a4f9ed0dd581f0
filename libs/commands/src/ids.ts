import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

// uuid 14 asks crypto.getRandomValues for 16 bytes per id; through WebCrypto's argument checks
// that was 4.9 s of the API's CPU in W1's profile. One kernel fill per 256 ids instead.
const POOL = new Uint8Array(16 * 256);
let next = POOL.length;

function random16(): Uint8Array {
  if (next === POOL.length) {
    randomFillSync(POOL);
    next = 0;
  }
  const bytes = POOL.subarray(next, next + 16);
  next += 16;
  return bytes;
}

/** A new id (UUIDv7), ordered by its millisecond: job, event and schedule ids. */
export function newId(): string {
  return v7({ random: random16() });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `id` has the form of a UUID (any version): what PostgreSQL's uuid type accepts. */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}
