/**
 * Occurrence identity: a name-based UUID (version 5, RFC 9562: SHA-1 of a namespace and a name), so
 * the same occurrence always gets the same id and an idempotent insert of a regenerated occurrence
 * is a no-op. Version 5 rather than a SHA-256 UUIDv8 because every stack can recompute it (e.g.
 * PostgreSQL's uuid_generate_v5, Python's uuid.uuid5); SHA-1's weakness against crafted
 * collisions does not matter for ids whose inputs are our own schedule ids.
 */

/** The namespace of occurrence ids (a random v4 UUID, fixed forever). */
export const OCCURRENCE_NAMESPACE = 'ea6e2b1d-73a3-4ac6-9aa3-e3ca61a56ad7';

const utf8 = new TextEncoder();

/** SHA-1 (FIPS 180-4) of some bytes, 20 bytes. */
export function sha1(data: Uint8Array): Uint8Array {
  const paddedLength = (((data.length + 8) >>> 6) + 1) << 6;
  const buf = new Uint8Array(paddedLength);
  buf.set(data);
  buf[data.length] = 0x80;
  const view = new DataView(buf.buffer);
  const bits = data.length * 8;
  view.setUint32(paddedLength - 8, Math.floor(bits / 0x1_0000_0000));
  view.setUint32(paddedLength - 4, bits >>> 0);
  const h = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0];
  const w = new Uint32Array(80);
  for (let off = 0; off < paddedLength; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getUint32(off + i * 4);
    for (let i = 16; i < 80; i++) {
      const x = w[i - 3]! ^ w[i - 8]! ^ w[i - 14]! ^ w[i - 16]!;
      w[i] = (x << 1) | (x >>> 31);
    }
    let [a, b, c, d, e] = h as [number, number, number, number, number];
    for (let i = 0; i < 80; i++) {
      let f: number;
      let k: number;
      if (i < 20) {
        f = (b & c) | (~b & d);
        k = 0x5a827999;
      } else if (i < 40) {
        f = b ^ c ^ d;
        k = 0x6ed9eba1;
      } else if (i < 60) {
        f = (b & c) | (b & d) | (c & d);
        k = 0x8f1bbcdc;
      } else {
        f = b ^ c ^ d;
        k = 0xca62c1d6;
      }
      const t = (((a << 5) | (a >>> 27)) + f + e + k + w[i]!) | 0;
      e = d;
      d = c;
      c = (b << 30) | (b >>> 2);
      b = a;
      a = t;
    }
    h[0] = (h[0]! + a) | 0;
    h[1] = (h[1]! + b) | 0;
    h[2] = (h[2]! + c) | 0;
    h[3] = (h[3]! + d) | 0;
    h[4] = (h[4]! + e) | 0;
  }
  const out = new Uint8Array(20);
  const ov = new DataView(out.buffer);
  h.forEach((x, i) => ov.setUint32(i * 4, x >>> 0));
  return out;
}

function uuidBytes(uuid: string): Uint8Array {
  const hex = uuid.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new RangeError(`not a UUID: ${uuid}`);
  const out = new Uint8Array(16);
  for (let i = 0; i < 16; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** RFC 9562 version 5 UUID of `name` (UTF-8) in `namespace`. */
export function uuidV5(namespace: string, name: string): string {
  const ns = uuidBytes(namespace);
  const nm = utf8.encode(name);
  const input = new Uint8Array(ns.length + nm.length);
  input.set(ns);
  input.set(nm, ns.length);
  const bytes = sha1(input).subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * The id of one occurrence: uuidV5(OCCURRENCE_NAMESPACE, "<scheduleId>\n<nominal>\n<instantIndex>").
 * `nominal` is the occurrence's nominal wall time with its zone (Occurrence.nominal);
 * `instantIndex` tells the two instants of a wall time that exists twice apart (overlap `both`).
 */
export function occurrenceId(scheduleId: string, nominal: string, instantIndex: 0 | 1 = 0): string {
  if (scheduleId === '') throw new RangeError('scheduleId must not be empty');
  if (instantIndex !== 0 && instantIndex !== 1)
    throw new RangeError(`instantIndex must be 0 or 1, got ${String(instantIndex)}`);
  return uuidV5(OCCURRENCE_NAMESPACE, `${scheduleId}\n${nominal}\n${instantIndex}`);
}
