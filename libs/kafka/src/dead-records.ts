import { SCHEMAS, type DeadRecordReason, type DeadRecordRecord } from '@kairos/schemas';
import type { Kafka, Producer } from 'kafkajs';
import type { AvroCodec } from './avro.js';
import type { FieldProblem } from './record-checks.js';
import { sourceFields, withSizeNote, type RecordSource } from './source-record.js';

/** Why it was set aside. */
export interface DeadRecordVerdict {
  readonly reason: DeadRecordReason;
  readonly message: string;
  readonly fields?: readonly FieldProblem[];
  readonly schemaId?: number | null;
}

export interface DeadRecordsOptions {
  readonly kafka: Kafka;
  readonly codec: AvroCodec;
  /** kairos.dead-records (with the deployment's prefix). */
  readonly topic: string;
  /** The consumer group setting records aside (recorded with each). */
  readonly consumer: string;
  readonly log?: { error: (obj: object, msg: string) => void };
  /** Called once per record set aside (a metric). */
  readonly onSetAside?: (sourceTopic: string, reason: DeadRecordReason) => void;
}

/** Above this a record's bytes are left out of its dead record (the message says so). */
const MAX_ORIGINAL_VALUE_BYTES = 1024 * 1024;
const MAX_MESSAGE_CHARS = 4096;

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/**
 * The one publisher of kairos.dead-records: a consumer of an internal topic hands it a record it
 * can never apply (it does not decode, is another topic's schema, has a field out of range, or
 * PostgreSQL or Redis refuses it as data), and goes on past it once the dead record is durable
 * (acks from all in-sync replicas). Its producer connects on first use: dead records are rare, and
 * an idle deployment should not hold a connection for them. A failed send throws, so the caller's
 * batch is retried and nothing is skipped unrecorded.
 */
export class DeadRecords {
  readonly #o: DeadRecordsOptions;
  #producer: Promise<Producer> | undefined;

  constructor(options: DeadRecordsOptions) {
    this.#o = options;
  }

  async setAside(source: RecordSource, verdict: DeadRecordVerdict): Promise<void> {
    const record = deadRecord(source, verdict, this.#o.consumer, new Date());
    const value = await this.#o.codec.encode(this.#o.topic, SCHEMAS.deadRecord, record);
    const producer = await this.#connected();
    await producer.send({
      topic: this.#o.topic,
      acks: -1,
      messages: [{ key: source.message.key ?? null, value }],
    });
    this.#o.log?.error(
      {
        topic: source.topic,
        partition: source.partition,
        offset: source.message.offset,
        reason: verdict.reason,
        fields: verdict.fields,
        detail: record.message,
      },
      `record set aside on ${this.#o.topic}`,
    );
    this.#o.onSetAside?.(source.topic, verdict.reason);
  }

  async stop(): Promise<void> {
    const producer = this.#producer;
    this.#producer = undefined;
    if (producer) await (await producer.catch(() => undefined))?.disconnect();
  }

  #connected(): Promise<Producer> {
    if (!this.#producer) {
      const producer = this.#o.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
      const connecting = producer.connect().then(() => producer);
      this.#producer = connecting;
      // A failed connect is tried again on the next record.
      connecting.catch(() => {
        if (this.#producer === connecting) this.#producer = undefined;
      });
    }
    return this.#producer;
  }
}

/** The dead record of a source record: its reason, and the record as it arrived. */
export function deadRecord(
  source: RecordSource,
  verdict: DeadRecordVerdict,
  consumer: string,
  now: Date,
): DeadRecordRecord {
  const { topic, partition, message } = source;
  const text = withSizeNote(verdict.message, source, MAX_ORIGINAL_VALUE_BYTES);
  return {
    dead_record_id: `${topic}/${partition}/${message.offset}`,
    reason: verdict.reason,
    message: clip(text, MAX_MESSAGE_CHARS),
    fields: (verdict.fields ?? []).map((f) => ({
      field: clip(f.field, 256),
      message: clip(f.message, 1024),
    })),
    consumer,
    schema_id: verdict.schemaId ?? null,
    ...sourceFields(source, MAX_ORIGINAL_VALUE_BYTES),
    dead_at: now.getTime(),
  };
}
