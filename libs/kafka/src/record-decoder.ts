import { KairosError } from '@kairos/core';
import avro from 'avsc';
import { valueSubject, wireSchemaId, type AvroSchema } from './avro.js';
import { isTransientRegistryError } from './kafka-errors.js';
import { RestError, type RegistryClient as Client } from './registry.js';

/** Why a value cannot be read as the topic's record. */
export type DecodeFailureReason = 'UNDECODABLE' | 'UNKNOWN_SCHEMA' | 'WRONG_SCHEMA';

export type Decoded<T> =
  | { readonly ok: true; readonly schemaId: number; readonly record: T }
  | {
      readonly ok: false;
      readonly reason: DecodeFailureReason;
      readonly message: string;
      readonly schemaId: number | null;
    };

/** How a writer schema id is read: with this resolver into the current reader, or never. */
type Verdict =
  | { readonly ok: true; readonly read: (body: Buffer) => unknown }
  | { readonly ok: false; readonly message: string };

/** Verdicts kept per schema id; ids are few (one per schema version) unless a producer is broken. */
const MAX_CACHED_VERDICTS = 1000;

/**
 * Decodes the values of one topic as its record type `T`, telling apart why one cannot be read:
 * not the Confluent wire format or an Avro body that does not decode (UNDECODABLE), a schema id
 * the registry does not know (UNKNOWN_SCHEMA), a schema that is not a version of `<topic>-value`
 * or cannot be read as the reader schema (WRONG_SCHEMA). Values written with any registered
 * version are resolved into the reader schema (Avro schema resolution), so older writers keep
 * working and a record of another topic's schema never passes for this one. A registry that does
 * not answer is a KairosError DEPENDENCY_UNAVAILABLE: nobody's fault, the caller retries.
 * `T` must be the TS view of `reader` (@kairos/schemas pairs them).
 */
export class RecordDecoder<T> {
  readonly #registry: Client;
  readonly #subject: string;
  readonly #reader: avro.Type;
  readonly #verdicts = new Map<number, Verdict>();

  constructor(registry: Client, topic: string, reader: AvroSchema) {
    this.#registry = registry;
    this.#subject = valueSubject(topic);
    this.#reader = avro.Type.forSchema(
      (typeof reader === 'string' ? JSON.parse(reader) : reader) as avro.Schema,
    );
  }

  async decode(value: Buffer | null): Promise<Decoded<T>> {
    const schemaId = value ? wireSchemaId(value) : undefined;
    if (!value || schemaId === undefined) {
      return {
        ok: false,
        reason: 'UNDECODABLE',
        schemaId: null,
        message: value
          ? 'not Avro in the Confluent wire format (magic byte 0, 4-byte schema id, body)'
          : 'no value',
      };
    }
    const verdict = await this.#verdict(schemaId);
    if (verdict === undefined) {
      return {
        ok: false,
        reason: 'UNKNOWN_SCHEMA',
        schemaId,
        message: `schema id ${schemaId} is not in the registry`,
      };
    }
    if (!verdict.ok) return { ok: false, reason: 'WRONG_SCHEMA', schemaId, message: verdict.message };
    try {
      return { ok: true, schemaId, record: verdict.read(value.subarray(5)) as T };
    } catch (err) {
      return {
        ok: false,
        reason: 'UNDECODABLE',
        schemaId,
        message: `the Avro body does not decode with schema ${schemaId}: ${(err as Error).message}`,
      };
    }
  }

  /** The verdict on a schema id, or undefined when the registry does not know the id. */
  async #verdict(id: number): Promise<Verdict | undefined> {
    const cached = this.#verdicts.get(id);
    if (cached) return cached;
    const info = await this.#registryCall(() => this.#registry.getBySubjectAndId(this.#subject, id));
    if (info === undefined) return undefined;
    const verdict = await this.#judge(id, info.schema);
    if (this.#verdicts.size >= MAX_CACHED_VERDICTS) this.#verdicts.clear();
    this.#verdicts.set(id, verdict);
    return verdict;
  }

  async #judge(id: number, schema: string): Promise<Verdict> {
    // A record of another subject may decode by accident; membership of the subject decides.
    const version = await this.#registryCall(() =>
      this.#registry.getVersion(this.#subject, { schemaType: 'AVRO', schema }, false, false),
    );
    if (version === undefined) {
      return { ok: false, message: `schema ${id} is not a version of ${this.#subject}` };
    }
    try {
      const writer = avro.Type.forSchema(JSON.parse(schema) as avro.Schema);
      if (writer.equals(this.#reader))
        return { ok: true, read: (body): unknown => this.#reader.fromBuffer(body) };
      const resolver = this.#reader.createResolver(writer);
      return { ok: true, read: (body): unknown => this.#reader.fromBuffer(body, resolver) };
    } catch (err) {
      return {
        ok: false,
        message: `schema ${id} (version ${version} of ${this.#subject}) cannot be read as the current one: ${
          (err as Error).message
        }`,
      };
    }
  }

  /**
   * A registry answer, or undefined for "not found" (404). Any other failure is
   * DEPENDENCY_UNAVAILABLE: an outage, but also a refusal (401, 403) is a deployment problem to
   * fix, never a reason to reject the requests that meet it.
   */
  async #registryCall<T>(call: () => Promise<T>): Promise<T | undefined> {
    try {
      return await call();
    } catch (err) {
      if (err instanceof RestError && err.status === 404) return undefined;
      const what = isTransientRegistryError(err) ? 'unavailable' : 'refused the request';
      throw new KairosError('DEPENDENCY_UNAVAILABLE', `schema registry ${what}: ${String(err)}`, {
        cause: err,
      });
    }
  }
}
