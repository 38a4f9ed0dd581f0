import type { Kafka } from 'kafkajs';
import { ensureTopics } from './admin.js';
import { withAdmin } from './groups.js';
import { topicNames, type TopicSpec } from './topics.js';

const WEEK_MS = String(7 * 24 * 60 * 60 * 1000);

/**
 * Creates a service's task topics (`kairos.tasks.<class>.<service>`) that do not exist yet, each
 * with its class topic's partitions and replication (the deployment chose those), a week's
 * retention as the class topics have. Run by the service's workers on start, before they join.
 */
export async function ensureServiceTopics(
  kafka: Kafka,
  prefix: string,
  classes: readonly string[],
  service: string,
): Promise<string[]> {
  const names = topicNames(prefix);
  const classTopics = classes.map((rc) => names.tasks(rc));
  const meta = await withAdmin(kafka, (admin) => admin.fetchTopicMetadata({ topics: classTopics }));
  const specs: TopicSpec[] = classes.map((rc) => {
    const source = meta.topics.find((t) => t.name === names.tasks(rc));
    return {
      name: names.serviceTasks(rc, service),
      partitions: source?.partitions.length ?? 4,
      replicationFactor: source?.partitions[0]?.replicas.length ?? 1,
      configs: { 'retention.ms': WEEK_MS },
      purpose: `delay-tier → workers of service ${service}, resource class ${rc}`,
    };
  });
  return (await ensureTopics(kafka, specs)).created;
}
