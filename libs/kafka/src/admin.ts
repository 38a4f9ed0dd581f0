import type { Admin, Kafka } from 'kafkajs';
import type { TopicSpec } from './topics.js';

/**
 * Creates every topic of the catalogue that does not exist yet (idempotent). Existing topics are
 * left alone; a partition count that differs from the catalogue is reported, not changed, since
 * changing it would move keys between partitions.
 */
export async function ensureTopics(
  kafka: Kafka,
  specs: readonly TopicSpec[],
): Promise<{ created: string[]; mismatched: string[] }> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = specs.filter((s) => !existing.has(s.name));
    if (missing.length > 0) {
      await admin.createTopics({
        // KafkaJS's own wait retries only LEADER_NOT_AVAILABLE; a broker that has just started
        // answers UNKNOWN_TOPIC_OR_PARTITION for a moment too, so we wait ourselves.
        waitForLeaders: false,
        topics: missing.map((s) => ({
          topic: s.name,
          numPartitions: s.partitions,
          replicationFactor: s.replicationFactor ?? 1,
          configEntries: Object.entries(s.configs).map(([name, value]) => ({ name, value })),
        })),
      });
    }
    if (missing.length > 0)
      await waitForLeaders(
        admin,
        missing.map((s) => s.name),
      );
    const present = specs.filter((s) => existing.has(s.name));
    const mismatched: string[] = [];
    if (present.length > 0) {
      const meta = await admin.fetchTopicMetadata({ topics: present.map((s) => s.name) });
      for (const t of meta.topics) {
        const spec = present.find((s) => s.name === t.name);
        if (spec && t.partitions.length !== spec.partitions) {
          mismatched.push(
            `${t.name} has ${t.partitions.length} partitions, catalogue says ${spec.partitions}`,
          );
        }
      }
    }
    return { created: missing.map((s) => s.name), mismatched };
  } finally {
    await admin.disconnect();
  }
}

/** Deletes every topic whose name starts with prefix (tests clean up their namespace). */
export async function deleteTopicsWithPrefix(kafka: Kafka, prefix: string): Promise<string[]> {
  if (prefix.length === 0) throw new RangeError('refusing to delete topics with an empty prefix');
  const admin = kafka.admin();
  await admin.connect();
  try {
    const topics = (await admin.listTopics()).filter((t) => t.startsWith(prefix));
    if (topics.length > 0) await admin.deleteTopics({ topics });
    return topics;
  } finally {
    await admin.disconnect();
  }
}

/**
 * Refuses to run against a topic whose partition count differs from what the app was configured
 * with: shards computed with the wrong count would route jobs to the wrong hot set.
 */
export async function assertPartitionCount(kafka: Kafka, topic: string, expected: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const meta = await admin.fetchTopicMetadata({ topics: [topic] });
    const actual = meta.topics[0]?.partitions.length ?? 0;
    if (actual !== expected) {
      throw new Error(`${topic} has ${actual} partitions but KAIROS_JOB_EVENT_PARTITIONS is ${expected}`);
    }
  } finally {
    await admin.disconnect();
  }
}

/** Polls metadata until every partition of the topics has a leader (at most 30 s). */
async function waitForLeaders(admin: Admin, topics: readonly string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  let delay = 50;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const meta = await admin.fetchTopicMetadata({ topics: [...topics] });
      const ready =
        meta.topics.length === topics.length &&
        meta.topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0));
      if (ready) return;
    } catch (err) {
      last = err; // UNKNOWN_TOPIC_OR_PARTITION / LEADER_NOT_AVAILABLE while the topic settles
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 1000);
  }
  throw new Error(`topics ${topics.join(', ')} have no leaders after 30 s`, { cause: last });
}
