import { kafkaClientOptions, kafkaEnv, registryOptions, type KafkaEnv } from '@kairos/config';
import {
  AvroCodec,
  createKafka,
  createRegistryClient,
  topicNames,
  wireSchemaId,
  type TopicNames,
} from '@kairos/kafka';
import type { Kafka } from 'kafkajs';

/** What the commands that read Kafka itself need (topics tail, dlq rewind): the KAIROS_KAFKA_* settings. */
export interface KafkaContext {
  readonly env: KafkaEnv;
  readonly kafka: Kafka;
  readonly topics: TopicNames;
  /** Decodes a value for people: Avro through the registry, else JSON, else text, else base64. */
  decode(topic: string, value: Buffer | null): Promise<unknown>;
}

function textOrBase64(value: Buffer): unknown {
  const text = value.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(value)) return { base64: value.toString('base64') };
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

export function kafkaContext(env: NodeJS.ProcessEnv): KafkaContext {
  const e = kafkaEnv(env);
  const kafka = createKafka(kafkaClientOptions(e, 'cli'));
  let codec: AvroCodec | undefined;
  return {
    env: e,
    kafka,
    topics: topicNames(e.topicPrefix),
    async decode(topic, value) {
      if (value === null) return null;
      if (wireSchemaId(value) === undefined) return textOrBase64(value);
      codec ??= new AvroCodec(createRegistryClient(registryOptions(e)));
      return codec.decode(topic, value);
    },
  };
}

/** JSON that shows what Avro decodes to: bytes as base64, longs as numbers or strings. */
export function jsonOfRecord(value: unknown, space?: number): string {
  return JSON.stringify(
    value,
    (_k, v: unknown) => {
      if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
      if (
        v &&
        typeof v === 'object' &&
        (v as { type?: unknown }).type === 'Buffer' &&
        Array.isArray((v as { data?: unknown }).data)
      )
        return { base64: Buffer.from((v as { data: number[] }).data).toString('base64') };
      return v;
    },
    space,
  );
}
