import type { IHeaders, Message, Producer, ProducerBatch, RecordMetadata, TopicMessages } from 'kafkajs';

/**
 * The most a send carries, estimated: half the broker's default `message.max.bytes` (1 MiB).
 * KafkaJS puts all of a send's messages for one partition into one record batch, and a batch
 * over the limit is refused whole (MESSAGE_TOO_LARGE), every time it is retried.
 */
export const MAX_SEND_BYTES = 512 * 1024;

/** Record overhead beyond key, value and headers (lengths, offsets, timestamps), generously. */
const RECORD_OVERHEAD = 64;

const size = (v: Buffer | string | null | undefined): number =>
  v === null || v === undefined ? 0 : typeof v === 'string' ? Buffer.byteLength(v) : v.length;

function headerBytes(headers: IHeaders | undefined): number {
  let n = 0;
  for (const [k, v] of Object.entries(headers ?? {})) {
    n += Buffer.byteLength(k);
    for (const one of Array.isArray(v) ? v : [v]) n += size(one);
  }
  return n;
}

/** A message's bytes in a record batch, estimated from above. */
export function messageBytes(m: Message): number {
  return size(m.key) + size(m.value) + headerBytes(m.headers) + RECORD_OVERHEAD;
}

/**
 * The batch's messages in consecutive chunks of at most `maxBytes` each (a larger message alone),
 * order kept within each topic.
 */
export function chunkBySize(batch: readonly TopicMessages[], maxBytes: number): TopicMessages[][] {
  const chunks: TopicMessages[][] = [];
  let current: TopicMessages[] = [];
  let bytes = 0;
  for (const { topic, messages } of batch) {
    for (const m of messages) {
      const b = messageBytes(m);
      if (bytes + b > maxBytes && bytes > 0) {
        chunks.push(current);
        current = [];
        bytes = 0;
      }
      const last = current.at(-1);
      if (last?.topic === topic) last.messages.push(m);
      else current.push({ topic, messages: [m] });
      bytes += b;
    }
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/**
 * Splits any send over `maxBytes` into sends under it, one after another (in order: a later
 * chunk goes only once the earlier ones are acknowledged). A send that fails partway has sent
 * its first chunks, as a send to several brokers can already: callers that retry treat it as
 * failed whole, and what was sent is delivered again, which consumers already allow for.
 */
export function sizedSends(p: Producer, maxBytes = MAX_SEND_BYTES): Producer {
  const sendBatch = p.sendBatch.bind(p);
  const sized = async (batch: ProducerBatch): Promise<RecordMetadata[]> => {
    const chunks = chunkBySize(batch.topicMessages ?? [], maxBytes);
    if (chunks.length <= 1) return sendBatch(batch);
    const acked: RecordMetadata[] = [];
    for (const topicMessages of chunks) acked.push(...(await sendBatch({ ...batch, topicMessages })));
    return acked;
  };
  p.sendBatch = sized;
  p.send = ({ topic, messages, ...rest }) => sized({ ...rest, topicMessages: [{ topic, messages }] });
  return p;
}
