import { KairosError } from '@kairos/core';
import {
  consumerGroups,
  forgetWorkers,
  GroupActiveError,
  groupStatuses,
  groupKey,
  instanceKey,
  isLive,
  readWorkerRegistry,
  retireGroup,
  topicNames,
  type Announced,
  type GroupStatus,
} from '@kairos/kafka';
import type { WorkerGroupView } from './api-schemas.js';
import type { StatusSources } from './system-status.js';

const iso = (ms: number) => new Date(ms).toISOString();
const union = (lists: readonly (readonly string[])[]) => [...new Set(lists.flat())].sort();

/** Instances not heard from for this long are left out of the view (crashed long ago), ms. */
const FORGOTTEN_AFTER_MS = 3_600_000;

function groupView(
  id: string,
  announced: Announced | undefined,
  instances: readonly Announced[],
  kafka: GroupStatus | undefined,
  now: number,
): WorkerGroupView {
  const live = instances.filter((w) => isLive(w, now));
  const all = announced ? [announced, ...instances] : instances;
  const seen = all.map((w) => w.seenAt);
  return {
    group: id,
    services: union(all.map((w) => [w.heartbeat.service])),
    resource_classes: union(all.map((w) => w.heartbeat.resource_classes)),
    // What its live workers handle; once none is, what the last one did.
    job_types: union((live.length > 0 ? live : all).map((w) => w.heartbeat.job_types)),
    state: kafka?.state ?? 'Dead',
    members: kafka?.members.length ?? 0,
    lag: kafka?.lag ?? 0,
    last_seen_at: seen.length > 0 ? iso(Math.max(...seen)) : null,
    workers: instances
      .filter((w) => now - w.seenAt <= FORGOTTEN_AFTER_MS)
      .map((w) => ({
        worker_id: w.heartbeat.worker_id,
        host: w.heartbeat.host,
        pid: w.heartbeat.pid,
        started_at: iso(w.heartbeat.started_at),
        last_seen_at: iso(w.seenAt),
        live: isLive(w, now),
        resource_classes: w.heartbeat.resource_classes,
        job_types: w.heartbeat.job_types,
      })),
  };
}

/**
 * Every worker service's group: those its workers announced on kairos.workers (also once they all
 * stopped, until retired), and the groups of the default id (`<prefix>kairos-workers.…`) Kafka
 * knows even if no worker announced them (an older SDK). With Kafka's state, members and lag.
 */
export async function readWorkerGroups(s: StatusSources): Promise<WorkerGroupView[]> {
  const { groups, instances } = await readWorkerRegistry(
    s.kafka,
    s.registry,
    topicNames(s.topicPrefix).workers,
  );
  const defaults = await consumerGroups(s.kafka, `${s.topicPrefix}kairos-workers.`);
  const announced = [...groups.keys()].filter((id) => !defaults.some((g) => g.group === id));
  const statuses = [...defaults, ...(await groupStatuses(s.kafka, announced))];
  const now = Date.now();
  return statuses
    .map((g) =>
      groupView(
        g.group,
        groups.get(g.group),
        instances.filter((w) => w.heartbeat.group_id === g.group),
        g,
        now,
      ),
    )
    .sort((a, b) => a.group.localeCompare(b.group));
}

/**
 * Retires a worker service's group: refused (CONFLICT) while it has members; then its offsets are
 * deleted (it leaves `kairos status`, the lag metrics and their alerts) and it and its workers are
 * forgotten on kairos.workers. NOT_FOUND when neither Kafka nor kairos.workers knows it.
 */
export async function retireWorkerGroup(s: StatusSources, group: string): Promise<WorkerGroupView> {
  const topic = topicNames(s.topicPrefix).workers;
  const { groups, instances } = await readWorkerRegistry(s.kafka, s.registry, topic);
  const [kafka] = await groupStatuses(s.kafka, [group]);
  const mine = instances.filter((w) => w.heartbeat.group_id === group);
  if (!groups.has(group) && mine.length === 0 && (!kafka || kafka.state === 'Dead'))
    throw new KairosError('NOT_FOUND', `no worker group ${group}`);
  try {
    await retireGroup(s.kafka, group);
  } catch (err) {
    if (!(err instanceof GroupActiveError)) throw err;
    throw new KairosError('CONFLICT', `${err.message}: stop its workers first`);
  }
  const producer = s.kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    const keys = [groupKey(group), ...mine.map((w) => instanceKey(group, w.heartbeat.worker_id))];
    await forgetWorkers(producer, topic, keys);
  } finally {
    await producer.disconnect();
  }
  return {
    ...groupView(group, groups.get(group), mine, kafka, Date.now()),
    state: 'Dead',
    members: 0,
    lag: 0,
  };
}
