import avro from 'avsc';
import { HEADERS, wireSchemaId } from '@kairos/kafka';
import type { Namespace } from './namespace.js';

export interface DecodedMessage {
  readonly partition: number;
  readonly offset: string;
  readonly key: string | undefined;
  readonly value: unknown;
  /** Sent by the outbox relay (header kairos-relay), not by Debezium. */
  readonly relayed: boolean;
}

const typeCache = new Map<string, avro.Type>();

/**
 * Decodes a Confluent-wire-format value the way Kafka UI does: schema id from the bytes, schema
 * from the registry's REST API by id, a generic Avro decoder. Throws if any step fails.
 */
export async function genericDecode(registryUrl: string, bytes: Buffer): Promise<unknown> {
  const id = wireSchemaId(bytes);
  if (id === undefined) throw new Error('not in the Confluent wire format');
  const cacheKey = `${registryUrl}#${id}`;
  let type = typeCache.get(cacheKey);
  if (!type) {
    const res = await fetch(`${registryUrl}/schemas/ids/${id}`);
    if (!res.ok) throw new Error(`registry has no schema ${id}: ${res.status}`);
    const { schema } = (await res.json()) as { schema: string };
    type = avro.Type.forSchema(JSON.parse(schema) as avro.Schema);
    typeCache.set(cacheKey, type);
  }
  return type.fromBuffer(bytes.subarray(5));
}

/** Reads a topic from the beginning to its current end, decoding every value generically. */
export async function readAllDecoded(ns: Namespace, topic: string): Promise<DecodedMessage[]> {
  const admin = ns.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const remaining = new Map(ends.filter((e) => Number(e.high) > 0).map((e) => [e.partition, BigInt(e.high)]));
  const out: DecodedMessage[] = [];
  if (remaining.size === 0) return out;
  const consumer = ns.consumer({ groupId: `${ns.prefix}reader-${Math.random().toString(36).slice(2)}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((done, fail) => {
    consumer
      .run({
        eachMessage: async ({ partition, message }) => {
          out.push({
            partition,
            offset: message.offset,
            key: message.key?.toString(),
            value: await genericDecode(ns.services.registryUrl, message.value!),
            relayed: message.headers?.[HEADERS.relay] !== undefined,
          });
          const high = remaining.get(partition);
          if (high !== undefined && BigInt(message.offset) + 1n >= high) remaining.delete(partition);
          if (remaining.size === 0) done();
        },
      })
      .catch(fail);
  });
  await consumer.disconnect();
  return out;
}
