import type { Pool } from '@kairos/db';
import { probe } from '@kairos/http';
import { consumerGroups, type GroupStatus, type RegistryClient } from '@kairos/kafka';
import type { Kafka } from 'kafkajs';
import type { SystemStatus } from './api-schemas.js';

export interface StatusSources {
  readonly pool: Pool;
  readonly kafka: Kafka;
  readonly registry: RegistryClient;
  /** Groups whose id starts with this are Kairos's: `<topic prefix>kairos-`. */
  readonly groupPrefix: string;
  /** The deployment's topic prefix (kairos.workers is read with it). */
  readonly topicPrefix: string;
  /** Longest a dependency may take to answer before it is reported down. Default: 5,000 ms. */
  readonly timeoutMs?: number;
}

function groupView(g: GroupStatus): SystemStatus['groups'][number] {
  return {
    group: g.group,
    state: g.state,
    members: g.members.map((m) => ({ client_id: m.clientId, host: m.host })),
    lag: g.lag,
    topics: g.topics.map((t) => ({ topic: t.topic, lag: t.lag, partitions: [...t.partitions] })),
  };
}

/**
 * What `GET /v1/status` answers: each dependency of the API (PostgreSQL, Kafka, the registry)
 * and every Kairos consumer group (the apps' instances) with its lag per topic.
 */
export async function readSystemStatus(s: StatusSources): Promise<SystemStatus> {
  const timeoutMs = s.timeoutMs ?? 5000;
  let groups: GroupStatus[] = [];
  const services = await Promise.all([
    probe('postgresql', timeoutMs, async () => {
      const r = await s.pool.query<{ v: string }>("SELECT current_setting('server_version') AS v");
      return `PostgreSQL ${r.rows[0]?.v ?? '?'}`;
    }),
    probe('kafka', timeoutMs, async () => {
      groups = await consumerGroups(s.kafka, s.groupPrefix);
      return `${groups.length} Kairos consumer group(s)`;
    }),
    probe(
      'schema registry',
      timeoutMs,
      async () => `${(await s.registry.getAllSubjects()).length} subject(s)`,
    ),
  ]);
  return { services, groups: groups.map(groupView) };
}
