import type { Namespace } from './namespace.js';
import { eventually, type Pipeline } from './pipeline.js';

/**
 * Waits until the namespace's delay tier has read both copies (outbox relay, then Debezium) of
 * at least `events` job events: after this no copy arrives late, so a test can change Redis
 * behind the tier without an event undoing or revealing it.
 */
export async function bothCopiesRead(
  ns: Namespace,
  p: Pick<Pipeline, 'topics'>,
  events: number,
): Promise<void> {
  const admin = ns.admin();
  await admin.connect();
  try {
    const total = (offsets: readonly { offset: string }[]) =>
      offsets.reduce((sum, o) => sum + Math.max(0, Number(o.offset)), 0);
    await eventually('the tier to have read both copies of every event', async () => {
      const end = total((await admin.fetchTopicOffsets(p.topics.jobEvents)).map((o) => ({ offset: o.high })));
      const [read] = await admin.fetchOffsets({
        groupId: `${ns.prefix}delay-tier`,
        topics: [p.topics.jobEvents],
      });
      return end >= 2 * events && total(read?.partitions ?? []) >= end;
    });
  } finally {
    await admin.disconnect();
  }
}
