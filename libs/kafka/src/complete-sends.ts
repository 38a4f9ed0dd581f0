import {
  Partitioners,
  type ICustomPartitioner,
  type Message,
  type Producer,
  type ProducerBatch,
  type RecordMetadata,
  type TopicMessages,
} from 'kafkajs';

/** The partition KafkaJS's partitioner last chose for each message object of a send. */
const chosen = new WeakMap<object, number>();

/** `make`'s partitioner (KafkaJS's default if none), noting the partition of every message. */
export function notingPartitioner(
  make: ICustomPartitioner = Partitioners.DefaultPartitioner,
): ICustomPartitioner {
  return () => {
    const partitioner = make();
    return (args) => {
      const partition = partitioner(args);
      chosen.set(args.message, partition);
      return partition;
    };
  };
}

/** KafkaJS acknowledged a send but some of its messages were never sent, even after resending. */
export class KafkaUnsentMessagesError extends Error {
  override readonly name = 'KafkaUnsentMessagesError';
  /** Transient: the caller retries as for a broker that did not answer. */
  readonly retriable = true;
}

/** The messages of `batch` that no acknowledged partition of `acked` covers, each pinned to its partition. */
export function unacknowledged(
  batch: readonly TopicMessages[],
  acked: readonly RecordMetadata[],
): TopicMessages[] {
  const out: TopicMessages[] = [];
  for (const { topic, messages } of batch) {
    const ok = new Set(
      acked.filter((m) => m.topicName === topic && m.errorCode === 0).map((m) => m.partition),
    );
    const missing: Message[] = [];
    for (const m of messages) {
      const partition = m.partition ?? chosen.get(m);
      if (partition !== undefined && !ok.has(partition)) missing.push({ ...m, partition });
    }
    if (missing.length > 0) out.push({ topic, messages: missing });
  }
  return out;
}

/** Resends of what an acknowledged send left out, before giving up (with a retriable error). */
const RESENDS = 5;

/**
 * Makes the producer's sends complete. KafkaJS 2.2.4 retries a failed send only to brokers that
 * have not answered yet: when a leader dies mid-send and its partitions move to a broker that
 * already acknowledged its own share, their messages are never sent, and the send resolves as if
 * they were (tulios/kafkajs#1303). Here every send is checked against the acknowledged partitions
 * and what is missing is sent again, to the partition it was meant for. Needs the producer made
 * with notingPartitioner. Sends with acks=0 get no acknowledgements and are left alone.
 */
export function completeSends(p: Producer): Producer {
  const sendBatch = p.sendBatch.bind(p);
  const complete = async (batch: ProducerBatch): Promise<RecordMetadata[]> => {
    const acked = await sendBatch(batch);
    if (batch.acks === 0) return acked;
    let missing = unacknowledged(batch.topicMessages ?? [], acked);
    for (let round = 0; missing.length > 0; round++) {
      const count = missing.reduce((n, t) => n + t.messages.length, 0);
      if (round === RESENDS)
        throw new KafkaUnsentMessagesError(`${count} message(s) acknowledged by Kafka were never sent`);
      p.logger().warn('resending messages a send left out', { count, round });
      acked.push(...(await sendBatch({ ...batch, topicMessages: missing })));
      missing = unacknowledged(missing, acked);
    }
    return acked;
  };
  p.sendBatch = complete;
  p.send = ({ topic, messages, ...rest }) => complete({ ...rest, topicMessages: [{ topic, messages }] });
  return p;
}
