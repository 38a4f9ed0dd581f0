import { HEADERS, type AvroCodec, type TopicNames } from '@kairos/kafka';
import {
  SCHEMAS,
  type ScheduleRequestOutcomeRecord,
  type ScheduleRequestRejectionRecord,
} from '@kairos/schemas';
import type { Message, Producer } from 'kafkajs';

/** The answer to one request. */
export type Answer =
  | {
      readonly kind: 'outcome';
      readonly record: ScheduleRequestOutcomeRecord;
      readonly traceparent: string | null;
    }
  | {
      readonly kind: 'rejection';
      readonly record: ScheduleRequestRejectionRecord;
      /** The request's own key: the rejection is keyed like the request. */
      readonly key: Buffer | null;
    };

/** Most bytes of answers per send: a record batch well under the default 1 MiB message limit. */
const MAX_SEND_BYTES = 512 * 1024;

/**
 * Writes a batch's answers (outcomes to the replies topic, rejections to the rejected topic) and
 * the batch's next consumer offset in one Kafka transaction, so they commit together or not at
 * all. A transactional producer runs one transaction at a time: batches of several partitions
 * take turns.
 */
export class AnswerWriter {
  readonly #producer: Producer;
  readonly #codec: AvroCodec;
  readonly #topics: TopicNames;
  readonly #groupId: string;
  #turn: Promise<unknown> = Promise.resolve();

  constructor(o: { producer: Producer; codec: AvroCodec; topics: TopicNames; groupId: string }) {
    this.#producer = o.producer;
    this.#codec = o.codec;
    this.#topics = o.topics;
    this.#groupId = o.groupId;
  }

  async commit(
    source: { readonly topic: string; readonly partition: number; readonly nextOffset: string },
    answers: readonly Answer[],
  ): Promise<void> {
    const outcomes: Message[] = [];
    const rejections: Message[] = [];
    for (const a of answers) {
      if (a.kind === 'outcome') outcomes.push(await this.#outcome(a.record, a.traceparent));
      else rejections.push(await this.#rejection(a.record, a.key));
    }
    const turn = this.#turn.then(async () => {
      const txn = await this.#producer.transaction();
      try {
        for (const [topic, messages] of [
          [this.#topics.scheduleRequestsReplies, outcomes],
          [this.#topics.scheduleRequestsRejected, rejections],
        ] as const) {
          // One partition's share of a send is one record batch, which the broker limits like a message.
          for (const chunk of bySize(messages, MAX_SEND_BYTES)) await txn.send({ topic, messages: chunk });
        }
        await txn.sendOffsets({
          consumerGroupId: this.#groupId,
          topics: [
            { topic: source.topic, partitions: [{ partition: source.partition, offset: source.nextOffset }] },
          ],
        });
        await txn.commit();
      } catch (err) {
        await txn.abort().catch(() => undefined);
        throw err;
      }
    });
    this.#turn = turn.catch(() => undefined);
    await turn;
  }

  async #outcome(record: ScheduleRequestOutcomeRecord, traceparent: string | null): Promise<Message> {
    return {
      key: record.idempotency_key,
      value: await this.#codec.encode(
        this.#topics.scheduleRequestsReplies,
        SCHEMAS.scheduleRequestOutcome,
        record,
      ),
      headers: {
        [HEADERS.requestId]: record.request_id,
        [HEADERS.tenant]: record.tenant,
        // A schedule command other than a trigger concerns no job.
        ...(record.job_id === '' ? {} : { [HEADERS.jobId]: record.job_id }),
        ...(record.schedule_id ? { [HEADERS.scheduleId]: record.schedule_id } : {}),
        ...(traceparent === null ? {} : { [HEADERS.traceparent]: traceparent }),
      },
    };
  }

  /** A rejection's message; one that would still be too large loses the request's key and bytes. */
  async #rejection(record: ScheduleRequestRejectionRecord, key: Buffer | null): Promise<Message> {
    const topic = this.#topics.scheduleRequestsRejected;
    const headers = {
      [HEADERS.rejectionReason]: record.reason,
      ...(record.request_id === null ? {} : { [HEADERS.requestId]: record.request_id }),
      ...(record.tenant === null ? {} : { [HEADERS.tenant]: record.tenant }),
    };
    const value = await this.#codec.encode(topic, SCHEMAS.scheduleRequestRejection, record);
    if (value.length + (key?.length ?? 0) <= MAX_SEND_BYTES) return { key, value, headers };
    const stripped: ScheduleRequestRejectionRecord = {
      ...record,
      message: `${record.message} (the original key, headers and value are too large to include)`,
      original_key: null,
      original_headers: [],
      original_value: null,
    };
    return {
      key: key && key.subarray(0, 256),
      value: await this.#codec.encode(topic, SCHEMAS.scheduleRequestRejection, stripped),
      headers,
    };
  }
}

/** Splits messages into runs of at most maxBytes (a larger message goes alone). */
function bySize(messages: readonly Message[], maxBytes: number): Message[][] {
  const chunks: Message[][] = [];
  let chunk: Message[] = [];
  let size = 0;
  for (const m of messages) {
    const bytes = byteLength(m.value) + byteLength(m.key) + 64;
    if (chunk.length > 0 && size + bytes > maxBytes) {
      chunks.push(chunk);
      chunk = [];
      size = 0;
    }
    chunk.push(m);
    size += bytes;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

function byteLength(v: Buffer | string | null | undefined): number {
  return v === null || v === undefined ? 0 : typeof v === 'string' ? Buffer.byteLength(v) : v.length;
}
