import type { RegistryClient as Client } from './registry.js';
import { KairosError } from '@kairos/core';
import avro from 'avsc';
import { isTransientRegistryError } from './kafka-errors.js';

/** TopicNameStrategy, the subject Kafka UI and every Confluent-format client look up. */
export function valueSubject(topic: string): string {
  return `${topic}-value`;
}

/** An Avro schema: its JSON text or the parsed object (e.g. one of `SCHEMAS`). */
export type AvroSchema = string | object;

const schemaText = (schema: AvroSchema) => (typeof schema === 'string' ? schema : JSON.stringify(schema));

/** A registered schema: its id and its compiled Avro type. */
interface Registered {
  readonly id: number;
  readonly type: avro.Type;
}

/** One subject's writer: the schema it was asked for and its registration. */
interface Writer {
  readonly schema: AvroSchema;
  readonly text: string;
  readonly ready: Promise<Registered>;
}

/** The wire format's header: magic byte 0, then the schema id (big-endian int32). */
function wireHeader(id: number): Buffer {
  const header = Buffer.alloc(5);
  header.writeInt32BE(id, 1);
  return header;
}

/**
 * Avro values in the Confluent wire format (magic byte, schema id, Avro body) through the
 * Schema Registry. A writer names the schema with each value; the codec registers it under
 * `<topic>-value` on first use and writes with that id from then on, so no caller registers
 * anything up front. Readers decode any registered schema id, so older and newer writers can
 * share a topic.
 *
 * The registry client is used for registering and for fetching a writer schema by id, once per
 * id; values are encoded and decoded here with avsc (the bytes Confluent's serializer writes).
 * Its serializer and deserializer did per value what needs doing once per schema (deterministic
 * stringify of the schema, inline-tag walks, a process-wide lock per id lookup): ~10 % of the
 * API's and the delay tier's CPU in the W1 profile.
 */
export class AvroCodec {
  readonly #client: Client;
  /** Per subject; concurrent first uses share one registration, a failed one is dropped. */
  readonly #writers = new Map<string, Writer>();
  /** Writer schemas by id, for decoding; a failed lookup is dropped (tried again next time). */
  readonly #readers = new Map<number, Promise<avro.Type>>();

  constructor(client: Client) {
    this.#client = client;
  }

  /** The registry client it reads and registers through (a RecordDecoder shares it). */
  get registry(): Client {
    return this.#client;
  }

  /** Serializes `value` with `schema`, registering the schema under `<topic>-value` on first use. */
  async encode(topic: string, schema: AvroSchema, value: unknown): Promise<Buffer> {
    const { id, type } = await this.#writer(topic, schema);
    return Buffer.concat([wireHeader(id), type.toBuffer(value)]);
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

  async #register(subject: string, text: string): Promise<Registered> {
    const type = avro.Type.forSchema(JSON.parse(text) as avro.Schema);
    const id = await this.#client.register(subject, { schemaType: 'AVRO', schema: text }, false);
    return { id, type };
  }

  #reader(topic: string, id: number): Promise<avro.Type> {
    let reader = this.#readers.get(id);
    if (!reader) {
      reader = this.#client
        .getBySubjectAndId(valueSubject(topic), id)
        .then((info) => avro.Type.forSchema(JSON.parse(info.schema) as avro.Schema));
      this.#readers.set(id, reader);
      reader.catch(() => this.#readers.delete(id));
    }
    return reader;
  }

  /**
   * Decodes a value. Throws a KairosError: UNDECODABLE (not retriable: the bytes can never be
   * read, e.g. no magic byte, unknown schema id, truncated Avro) or DEPENDENCY_UNAVAILABLE
   * (retriable: the registry did not answer), so a consumer skips only what is truly poison.
   */
  async decode(topic: string, bytes: Buffer): Promise<unknown> {
    const id = wireSchemaId(bytes);
    if (id === undefined) {
      throw new KairosError('UNDECODABLE', `value on ${topic} is not in the Confluent wire format`);
    }
    try {
      const type = await this.#reader(topic, id);
      return type.fromBuffer(bytes.subarray(5));
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
