import type { Admin, Kafka } from 'kafkajs';
import { GroupActiveError, withAdmin } from './groups.js';
import type { PartitionOffset } from './handoff-consumer.js';

/** A group's committed offsets on some topics, as KafkaJS's fetchOffsets gives them ('-1': none). */
export type CommittedOffsets = readonly {
  readonly topic: string;
  readonly partitions: readonly { readonly partition: number; readonly offset: string }[];
}[];

export interface TopicPartitionRef {
  readonly topic: string;
  readonly partition: number;
}

/** What a new group should commit before it first joins, and what it leaves to read from the start. */
export interface SeedPlan {
  /** Per partition the group has not committed on: the oldest position another group committed. */
  readonly offsets: readonly PartitionOffset[];
  /** Partitions neither the group nor any other has committed on: read from the beginning. */
  readonly fromBeginning: readonly TopicPartitionRef[];
}

/**
 * Where a group starts on each partition it has not committed on: at the oldest position any
 * other group committed there (that group has ended every task before it, and may still be
 * working through the ones after), else from the beginning. Partitions the group has committed on
 * are left out: its own position stands.
 */
export function planSeeds(own: CommittedOffsets, others: readonly CommittedOffsets[]): SeedPlan {
  const oldest = new Map<string, bigint>();
  for (const group of others) {
    for (const t of group) {
      for (const p of t.partitions) {
        const at = BigInt(p.offset);
        const key = `${p.partition}@${t.topic}`;
        const seen = oldest.get(key);
        if (at >= 0n && (seen === undefined || at < seen)) oldest.set(key, at);
      }
    }
  }
  const offsets: PartitionOffset[] = [];
  const fromBeginning: TopicPartitionRef[] = [];
  for (const t of own) {
    for (const p of t.partitions) {
      if (BigInt(p.offset) >= 0n) continue;
      const at = oldest.get(`${p.partition}@${t.topic}`);
      if (at === undefined) fromBeginning.push({ topic: t.topic, partition: p.partition });
      else offsets.push({ topic: t.topic, partition: p.partition, offset: at.toString() });
    }
  }
  return { offsets, fromBeginning };
}

export interface SeedLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  debug?(obj: object, msg?: string): void;
}

export interface SeedGroupOptions {
  readonly groupId: string;
  readonly topics: readonly string[];
  /** Tries before giving up (then the group reads from the beginning, as without seeding). Default: 3. */
  readonly attempts?: number;
  /** Pause after the first failed try, ms; doubled after each. Default: 500. */
  readonly pauseMs?: number;
  readonly logger?: SeedLogger;
}

/**
 * 'committed': the group has committed on every partition (nothing changed). 'joined': the group
 * has members, who seeded it before they joined (nothing changed). 'seeded': `plan` was committed.
 * 'failed': Kafka kept failing; nothing changed, the group reads uncommitted partitions from the
 * beginning.
 */
export interface GroupSeeding {
  readonly outcome: 'committed' | 'joined' | 'seeded' | 'failed';
  readonly plan: SeedPlan;
}

const NOTHING: SeedPlan = { offsets: [], fromBeginning: [] };

/** Groups whose offsets are read at once. */
const FETCH_CONCURRENCY = 8;

/**
 * Commits, before a group first joins, the positions planSeeds gives its uncommitted partitions
 * of `topics`, so a new group (a new service, a renamed group, a changed class list) does not
 * re-read the whole retention of the topics. Safe when several members of the new group start at
 * once: the commit is one request the broker refuses once the group has members. Transient
 * failures are tried again a few times, then reported by a warning: never thrown.
 */
export async function seedGroupOffsets(kafka: Kafka, o: SeedGroupOptions): Promise<GroupSeeding> {
  const attempts = o.attempts ?? 3;
  let pause = o.pauseMs ?? 500;
  for (let attempt = 1; ; attempt++) {
    try {
      return await seedOnce(kafka, o);
    } catch (err) {
      if (attempt >= attempts) {
        o.logger?.warn(
          { err, groupId: o.groupId, attempts },
          'group offsets not seeded: its uncommitted partitions are read from the beginning',
        );
        return { outcome: 'failed', plan: NOTHING };
      }
      await new Promise((r) => setTimeout(r, pause));
      pause *= 2;
    }
  }
}

async function seedOnce(kafka: Kafka, o: SeedGroupOptions): Promise<GroupSeeding> {
  const topics = [...o.topics];
  const found = await withAdmin(kafka, async (admin) => {
    const own = await admin.fetchOffsets({ groupId: o.groupId, topics });
    const uncommitted = own.some((t) => t.partitions.some((p) => BigInt(p.offset) < 0n));
    if (!uncommitted) return 'committed' as const;
    const [self] = (await admin.describeGroups([o.groupId])).groups;
    if (self && self.members.length > 0) return 'joined' as const;
    return planSeeds(own, await othersOffsets(admin, o.groupId, topics));
  });
  if (typeof found === 'string') return joinedOrCommitted(found, o);
  if (found.offsets.length > 0) {
    try {
      await commitWhileIdle(kafka, o.groupId, found.offsets);
    } catch (err) {
      if (!(err instanceof GroupActiveError)) throw err;
      return joinedOrCommitted('joined', o);
    }
  }
  const line = {
    groupId: o.groupId,
    seeded: found.offsets.map((s) => `${s.topic}/${s.partition}@${s.offset}`),
    fromBeginning: found.fromBeginning.map((p) => `${p.topic}/${p.partition}`),
  };
  // Partitions no group has used yet are found again on every start: not news.
  if (found.offsets.length > 0) o.logger?.info(line, "new group starts where the topics' other groups are");
  else o.logger?.debug?.(line, 'no group has committed on these partitions: read from the beginning');
  return { outcome: 'seeded', plan: found };
}

function joinedOrCommitted(outcome: 'joined' | 'committed', o: SeedGroupOptions): GroupSeeding {
  if (outcome === 'joined')
    o.logger?.debug?.({ groupId: o.groupId }, 'group has members already: they seeded it');
  return { outcome, plan: NOTHING };
}

/** The committed offsets on `topics` of every group but `self` (groups without any are kept: planSeeds skips them). */
async function othersOffsets(admin: Admin, self: string, topics: string[]): Promise<CommittedOffsets[]> {
  const ids = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g !== self);
  const out: CommittedOffsets[] = [];
  for (let i = 0; i < ids.length; i += FETCH_CONCURRENCY) {
    const batch = ids.slice(i, i + FETCH_CONCURRENCY);
    out.push(...(await Promise.all(batch.map((groupId) => admin.fetchOffsets({ groupId, topics })))));
  }
  return out;
}

/** The slice of KafkaJS's internal cluster used here (it has no public commit outside a membership). */
interface InternalCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  findGroupCoordinator(o: { groupId: string }): Promise<{
    offsetCommit(r: {
      groupId: string;
      groupGenerationId: number;
      memberId: string;
      topics: { topic: string; partitions: { partition: number; offset: string }[] }[];
    }): Promise<unknown>;
  }>;
}

/** The broker's answers to a commit without a membership for a group that has members. */
const GROUP_HAS_MEMBERS = new Set(['UNKNOWN_MEMBER_ID', 'ILLEGAL_GENERATION', 'REBALANCE_IN_PROGRESS']);

/**
 * Commits offsets for a group with no members, as `kafka-consumer-groups --reset-offsets` does:
 * one OffsetCommit without a generation, which the broker accepts only while the group is empty
 * (GroupActiveError otherwise). KafkaJS's admin.setOffsets instead joins the group with a
 * consumer of its own, which a member starting meanwhile would rebalance with, and might read
 * from the beginning before the commit lands.
 */
export async function commitWhileIdle(
  kafka: Kafka,
  groupId: string,
  offsets: readonly PartitionOffset[],
): Promise<void> {
  const cluster = internalCluster(kafka);
  await cluster.connect();
  try {
    const coordinator = await cluster.findGroupCoordinator({ groupId });
    const topics = [...new Set(offsets.map((x) => x.topic))].map((topic) => ({
      topic,
      partitions: offsets
        .filter((x) => x.topic === topic)
        .map((x) => ({ partition: x.partition, offset: x.offset })),
    }));
    await coordinator.offsetCommit({ groupId, groupGenerationId: -1, memberId: '', topics });
  } catch (err) {
    const type = (err as { type?: unknown }).type;
    if (typeof type === 'string' && GROUP_HAS_MEMBERS.has(type))
      throw new GroupActiveError(groupId, null, `group ${groupId} has members: offsets not committed`, {
        cause: err,
      });
    throw err;
  } finally {
    await cluster.disconnect();
  }
}

function internalCluster(kafka: Kafka): InternalCluster {
  const symbol = Object.getOwnPropertySymbols(kafka).find(
    (s) => s.description === 'private:Kafka:createCluster',
  );
  const create = symbol && (kafka as unknown as Record<symbol, unknown>)[symbol];
  if (typeof create !== 'function')
    throw new Error('this KafkaJS version has no cluster factory to commit with');
  return (create as (o: object) => InternalCluster).call(kafka, { allowAutoTopicCreation: false });
}
