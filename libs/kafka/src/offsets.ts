import type { Admin } from 'kafkajs';

type TopicOffsets = Awaited<ReturnType<Admin['fetchTopicOffsets']>>;

/** Attempts and the first pause of fetchTopicOffsetsSettled (pauses double, ~6 s in all). */
const ATTEMPTS = 7;
const FIRST_PAUSE_MS = 100;

/**
 * KafkaJS's `fetchTopicOffsets`, asked again while a partition's leadership is still settling: a
 * topic created a moment ago, or a broker restarting, answers NOT_LEADER_FOR_PARTITION or
 * LEADER_NOT_AVAILABLE (which KafkaJS marks retriable but does not retry here). Any other error,
 * or the last attempt's, is thrown.
 */
export async function fetchTopicOffsetsSettled(admin: Admin, topic: string): Promise<TopicOffsets> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await admin.fetchTopicOffsets(topic);
    } catch (err) {
      if (attempt >= ATTEMPTS || (err as { retriable?: unknown }).retriable !== true) throw err;
      await new Promise((r) => setTimeout(r, FIRST_PAUSE_MS * 2 ** (attempt - 1)));
      // The leaders KafkaJS cached may be the ones that moved.
      await admin.fetchTopicMetadata({ topics: [topic] });
    }
  }
}
