/**
 * Kafka's Java client partitioner hash (org.apache.kafka.common.utils.Utils.murmur2), bit for bit,
 * so a PostgreSQL shard computed here equals the partition the Java producer (Debezium) picks.
 */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  const m = 0x5bd1e995;
  let h = (0x9747b28c ^ length) | 0;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k =
      (data[i4]! & 0xff) |
      ((data[i4 + 1]! & 0xff) << 8) |
      ((data[i4 + 2]! & 0xff) << 16) |
      ((data[i4 + 3]! & 0xff) << 24);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const tail = length & ~3;
  const rest = length % 4; // Java's switch falls through 3 → 2 → 1
  if (rest >= 3) h ^= (data[tail + 2]! & 0xff) << 16;
  if (rest >= 2) h ^= (data[tail + 1]! & 0xff) << 8;
  if (rest >= 1) {
    h ^= data[tail]! & 0xff;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

const utf8 = new TextEncoder();

/** The partition (and PostgreSQL shard) of a routing key: toPositive(murmur2(utf8(key))) mod P. */
export function shardOf(routingKey: string, partitions: number): number {
  if (!Number.isInteger(partitions) || partitions < 1) {
    throw new RangeError(`partitions must be a positive integer, got ${partitions}`);
  }
  return (murmur2(utf8.encode(routingKey)) & 0x7fffffff) % partitions;
}
