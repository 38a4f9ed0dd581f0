import {
  AvroDeserializer,
  AvroSerializer,
  SchemaRegistryClient,
  SerdeType,
  type Client,
} from '@confluentinc/schemaregistry';

export interface RegistryOptions {
  /** Base URL of a Confluent-compatible registry, e.g. Apicurio's `http://host:port/apis/ccompat/v7`. */
  readonly url: string;
}

export function createRegistryClient(options: RegistryOptions): Client {
  return new SchemaRegistryClient({ baseURLs: [options.url] });
}

/** TopicNameStrategy, the subject Kafka UI and every Confluent-format client look up. */
export function valueSubject(topic: string): string {
  return `${topic}-value`;
}

/**
 * Avro values in the Confluent wire format (magic byte, schema id, Avro body) through the
 * Schema Registry. Writers register their schema explicitly and always write with that id;
 * readers decode any registered schema id, so older and newer writers can share a topic.
 */
export class AvroCodec {
  readonly #client: Client;
  readonly #serializers = new Map<string, AvroSerializer>();
  readonly #deserializer: AvroDeserializer;

  constructor(client: Client) {
    this.#client = client;
    this.#deserializer = new AvroDeserializer(client, SerdeType.VALUE, {});
  }

  /** Registers (or finds) `schema` under `<topic>-value` and writes with it from now on. */
  async register(topic: string, schema: string | object): Promise<number> {
    const text = typeof schema === 'string' ? schema : JSON.stringify(schema);
    const id = await this.#client.register(valueSubject(topic), { schemaType: 'AVRO', schema: text }, false);
    this.#serializers.set(
      topic,
      new AvroSerializer(this.#client, SerdeType.VALUE, { useSchemaId: id, autoRegisterSchemas: false }),
    );
    return id;
  }

  async encode(topic: string, value: unknown): Promise<Buffer> {
    const serializer = this.#serializers.get(topic);
    if (!serializer) throw new Error(`no schema registered for topic ${topic}; call register() first`);
    return serializer.serialize(topic, value);
  }

  async decode(topic: string, bytes: Buffer): Promise<unknown> {
    return this.#deserializer.deserialize(topic, bytes);
  }
}

/** Reads the schema id of a Confluent-wire-format value, or undefined if it is not one. */
export function wireSchemaId(bytes: Buffer): number | undefined {
  if (bytes.length < 5 || bytes[0] !== 0) return undefined;
  return bytes.readInt32BE(1);
}
