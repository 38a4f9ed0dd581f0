import {
  AvroDeserializer,
  AvroSerializer,
  SchemaRegistryClient,
  SerdeType,
  TopicNameStrategy,
  type Client,
} from '@confluentinc/schemaregistry';
import { KairosError } from '@kairos/core';
import { isTransientRegistryError } from './kafka-errors.js';

export interface RegistryOptions {
  /** Base URL of a Confluent-compatible registry, e.g. Apicurio's `http://host:port/apis/ccompat/v7`. */
  readonly url: string;
  /** Per-request timeout in ms; a hung registry must not hang its callers. Default: 10,000. */
  readonly timeoutMs?: number;
}

export function createRegistryClient(options: RegistryOptions): Client {
  return new SchemaRegistryClient({
    baseURLs: [options.url],
    createAxiosDefaults: { timeout: options.timeoutMs ?? 10_000 },
  });
}

/** TopicNameStrategy, the subject Kafka UI and every Confluent-format client look up. */
export function valueSubject(topic: string): string {
  return `${topic}-value`;
}

/** An Avro schema: its JSON text or the parsed object (e.g. one of `SCHEMAS`). */
export type AvroSchema = string | object;

const schemaText = (schema: AvroSchema) => (typeof schema === 'string' ? schema : JSON.stringify(schema));

/** One subject's writer: the schema it was asked for and its registration (id and serializer). */
interface Writer {
  readonly schema: AvroSchema;
  readonly text: string;
  readonly ready: Promise<{ readonly id: number; readonly serializer: AvroSerializer }>;
}

/**
 * Avro values in the Confluent wire format (magic byte, schema id, Avro body) through the
 * Schema Registry. A writer names the schema with each value; the codec registers it under
 * `<topic>-value` on first use and writes with that id from then on, so no caller registers
 * anything up front. Readers decode any registered schema id, so older and newer writers can
 * share a topic.
 */
export class AvroCodec {
  readonly #client: Client;
  /** Per subject; concurrent first uses share one registration, a failed one is dropped. */
  readonly #writers = new Map<string, Writer>();
  readonly #deserializer: AvroDeserializer;

  constructor(client: Client) {
    this.#client = client;
    // TopicNameStrategy, explicitly: the client's default first asks the registry for subject
    // "associations", an extra round trip per topic that Apicurio does not serve.
    this.#deserializer = new AvroDeserializer(client, SerdeType.VALUE, {
      subjectNameStrategy: TopicNameStrategy,
    });
  }

  /** Serializes `value` with `schema`, registering the schema under `<topic>-value` on first use. */
  async encode(topic: string, schema: AvroSchema, value: unknown): Promise<Buffer> {
    const { serializer } = await this.#writer(topic, schema);
    return serializer.serialize(topic, value);
  }

  /** The id `encode` writes `<topic>-value` with, registering the schema if not done yet. */
  async schemaId(topic: string, schema: AvroSchema): Promise<number> {
    return (await this.#writer(topic, schema)).id;
  }

  #writer(topic: string, schema: AvroSchema): Writer['ready'] {
    const subject = valueSubject(topic);
    const known = this.#writers.get(subject);
    // Callers pass the same schema object each time: the identity check spares the stringify.
    if (known && (known.schema === schema || known.text === schemaText(schema))) return known.ready;
    const text = schemaText(schema);
    const writer: Writer = { schema, text, ready: this.#register(subject, text) };
    this.#writers.set(subject, writer);
    // Not memoised when it failed (registry down, schema refused): the next use tries again.
    writer.ready.catch(() => {
      if (this.#writers.get(subject) === writer) this.#writers.delete(subject);
    });
    return writer.ready;
  }

  async #register(subject: string, text: string): Promise<{ id: number; serializer: AvroSerializer }> {
    const id = await this.#client.register(subject, { schemaType: 'AVRO', schema: text }, false);
    const serializer = new AvroSerializer(this.#client, SerdeType.VALUE, {
      useSchemaId: id,
      autoRegisterSchemas: false,
      subjectNameStrategy: TopicNameStrategy,
    });
    return { id, serializer };
  }

  /**
   * Decodes a value. Throws a KairosError: UNDECODABLE (not retriable: the bytes can never be
   * read, e.g. no magic byte, unknown schema id, truncated Avro) or DEPENDENCY_UNAVAILABLE
   * (retriable: the registry did not answer), so a consumer skips only what is truly poison.
   */
  async decode(topic: string, bytes: Buffer): Promise<unknown> {
    if (wireSchemaId(bytes) === undefined) {
      throw new KairosError('UNDECODABLE', `value on ${topic} is not in the Confluent wire format`);
    }
    try {
      return await this.#deserializer.deserialize(topic, bytes);
    } catch (err) {
      if (isTransientRegistryError(err)) {
        throw new KairosError('DEPENDENCY_UNAVAILABLE', `schema registry unavailable: ${String(err)}`, {
          cause: err,
        });
      }
      throw new KairosError('UNDECODABLE', `value on ${topic} does not decode: ${String(err)}`, {
        cause: err,
      });
    }
  }
}

/** Reads the schema id of a Confluent-wire-format value, or undefined if it is not one. */
export function wireSchemaId(bytes: Buffer): number | undefined {
  if (bytes.length < 5 || bytes[0] !== 0) return undefined;
  return bytes.readInt32BE(1);
}
