import type { Admin, Kafka } from 'kafkajs';
import { fetchTopicOffsetsSettled } from './offsets.js';

/** One partition of a group's subscription: where the group is and where the log ends. */
export interface PartitionLag {
  readonly partition: number;
  /** The group's committed offset; null when it has committed none on this partition. */
  readonly committed: number | null;
  /** The log end offset (high watermark). */
  readonly end: number;
  /** Records the group has yet to read: end − committed (from the log start when none committed). */
  readonly lag: number;
}

export interface TopicLag {
  readonly topic: string;
  readonly lag: number;
  readonly partitions: readonly PartitionLag[];
}

export interface GroupStatus {
  readonly group: string;
  /** The broker's state of the group: Stable, PreparingRebalance, CompletingRebalance, Empty, Dead. */
  readonly state: string;
  /** The live members: the app instances in this group. */
  readonly members: readonly { readonly clientId: string; readonly host: string }[];
  readonly lag: number;
  readonly topics: readonly TopicLag[];
}

/** Runs `use` with a connected admin client, always disconnecting it. */
export async function withAdmin<T>(kafka: Kafka, use: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await use(admin);
  } finally {
    await admin.disconnect();
  }
}

/** Per partition of `topic`: [log start, log end). */
async function topicBounds(admin: Admin, topic: string): Promise<Map<number, { low: number; high: number }>> {
  const offsets = await fetchTopicOffsetsSettled(admin, topic);
  return new Map(offsets.map((o) => [o.partition, { low: Number(o.low), high: Number(o.high) }]));
}

async function lagOf(admin: Admin, group: string): Promise<TopicLag[]> {
  const committed = await admin.fetchOffsets({ groupId: group });
  const topics: TopicLag[] = [];
  for (const t of committed) {
    const bounds = await topicBounds(admin, t.topic);
    const partitions = t.partitions.map((p): PartitionLag => {
      const b = bounds.get(p.partition) ?? { low: 0, high: 0 };
      const c = Number(p.offset);
      const at = c < 0 ? null : c;
      return { partition: p.partition, committed: at, end: b.high, lag: Math.max(0, b.high - (at ?? b.low)) };
    });
    partitions.sort((a, b) => a.partition - b.partition);
    topics.push({ topic: t.topic, lag: partitions.reduce((s, p) => s + p.lag, 0), partitions });
  }
  return topics.sort((a, b) => a.topic.localeCompare(b.topic));
}

/**
 * The consumer groups whose id starts with `groupPrefix` (every Kairos app's group starts with
 * `<topic prefix>kairos-`): their state, live members and lag per topic.
 */
export async function consumerGroups(kafka: Kafka, groupPrefix: string): Promise<GroupStatus[]> {
  return withAdmin(kafka, async (admin) => {
    const ids = (await admin.listGroups()).groups
      .map((g) => g.groupId)
      .filter((g) => g.startsWith(groupPrefix))
      .sort();
    return statusOf(admin, ids);
  });
}

/** These consumer groups' state, live members and lag per topic (a group Kafka does not know: state Dead). */
export async function groupStatuses(kafka: Kafka, ids: readonly string[]): Promise<GroupStatus[]> {
  return withAdmin(kafka, (admin) => statusOf(admin, [...new Set(ids)].sort()));
}

async function statusOf(admin: Admin, ids: string[]): Promise<GroupStatus[]> {
  if (ids.length === 0) return [];
  const described = (await admin.describeGroups(ids)).groups;
  const out: GroupStatus[] = [];
  for (const g of described) {
    const topics = await lagOf(admin, g.groupId);
    out.push({
      group: g.groupId,
      state: g.state,
      members: g.members.map((m) => ({ clientId: m.clientId, host: m.clientHost })),
      lag: topics.reduce((s, t) => s + t.lag, 0),
      topics,
    });
  }
  return out;
}

/** Where to move a group: the first offset at or after a time, the log start or end, or an offset. */
export type OffsetTarget =
  { readonly timestamp: number } | { readonly offset: number } | 'earliest' | 'latest';

export interface OffsetMove {
  readonly partition: number;
  readonly from: number | null;
  readonly to: number;
  readonly end: number;
  /** Records the group will read (again) from `to` to the log end. */
  readonly toRead: number;
  /** Of those, the records before `until` (when given): the time range being replayed. */
  readonly inRange: number;
}

/**
 * Thrown when a group to be moved, seeded or retired has live members: Kafka would refuse, and
 * they would race it. `members`: how many, when known.
 */
export class GroupActiveError extends Error {
  override readonly name = 'GroupActiveError';
  constructor(
    readonly group: string,
    readonly members: number | null,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

async function targetOffsets(
  admin: Admin,
  topic: string,
  target: OffsetTarget,
  bounds: Map<number, { low: number; high: number }>,
): Promise<Map<number, number>> {
  if (typeof target === 'object' && 'timestamp' in target) {
    const at = await admin.fetchTopicOffsetsByTimestamp(topic, target.timestamp);
    // -1 (no record at or after the time) is the log end; clamped to the bounds read before.
    return new Map(
      at.map((o) => {
        const b = bounds.get(o.partition) ?? { low: 0, high: 0 };
        const n = Number(o.offset);
        return [o.partition, n < 0 ? b.high : Math.min(b.high, Math.max(b.low, n))];
      }),
    );
  }
  const to = new Map<number, number>();
  for (const [p, b] of bounds) {
    if (target === 'earliest') to.set(p, b.low);
    else if (target === 'latest') to.set(p, b.high);
    else to.set(p, Math.min(b.high, Math.max(b.low, target.offset)));
  }
  return to;
}

/**
 * Moves consumer group `group` on `topic` (the partitions listed, or all) to `target`, like
 * `kafka-consumer-groups.sh --reset-offsets`: with `apply` false it only says what would move.
 * The group must have no live members (GroupActiveError otherwise): stop its consumers first.
 */
export async function moveGroupOffsets(
  kafka: Kafka,
  o: {
    readonly group: string;
    readonly topic: string;
    readonly target: OffsetTarget;
    readonly partitions?: readonly number[];
    /** The end of the range of interest (ms since the epoch): counted in `inRange`. Default: none. */
    readonly until?: number;
    readonly apply: boolean;
  },
): Promise<OffsetMove[]> {
  return withAdmin(kafka, async (admin) => {
    const [described] = (await admin.describeGroups([o.group])).groups;
    if (described && described.members.length > 0) {
      throw new GroupActiveError(
        o.group,
        described.members.length,
        `group ${o.group} has ${described.members.length} live member(s) (${described.members.map((m) => m.clientId).join(', ')}): stop its consumers, then move it`,
      );
    }
    const bounds = await topicBounds(admin, o.topic);
    for (const p of o.partitions ?? []) {
      if (!bounds.has(p)) throw new RangeError(`${o.topic} has no partition ${p} (it has ${bounds.size})`);
    }
    const chosen = new Map([...bounds].filter(([p]) => !o.partitions || o.partitions.includes(p)));
    const to = await targetOffsets(admin, o.topic, o.target, chosen);
    const upTo =
      o.until === undefined ? undefined : await targetOffsets(admin, o.topic, { timestamp: o.until }, chosen);
    const committed =
      (await admin.fetchOffsets({ groupId: o.group, topics: [o.topic] }))[0]?.partitions ?? [];
    const moves = [...chosen].map(([partition, b]): OffsetMove => {
      const c = Number(committed.find((x) => x.partition === partition)?.offset ?? -1);
      const dest = to.get(partition) ?? b.high;
      const stop = upTo?.get(partition) ?? b.high;
      return {
        partition,
        from: c < 0 ? null : c,
        to: dest,
        end: b.high,
        toRead: b.high - dest,
        inRange: Math.max(0, stop - dest),
      };
    });
    if (o.apply) {
      await admin.setOffsets({
        groupId: o.group,
        topic: o.topic,
        partitions: moves.map((m) => ({ partition: m.partition, offset: String(m.to) })),
      });
    }
    return moves.sort((a, b) => a.partition - b.partition);
  });
}

/**
 * Deletes consumer group `groupId` with its committed offsets (a retired service's group, which
 * would otherwise count as one of its topics' groups when a new group is seeded, until Kafka
 * expires its offsets). Refused with GroupActiveError while it has members. False if there was no
 * such group.
 */
export async function retireGroup(kafka: Kafka, groupId: string): Promise<boolean> {
  const refuse = (members: number | null, cause?: unknown) =>
    new GroupActiveError(
      groupId,
      members,
      `group ${groupId} has ${members ?? 'new'} member(s): stop its consumers, then retire it`,
      { cause },
    );
  return withAdmin(kafka, async (admin) => {
    const [g] = (await admin.describeGroups([groupId])).groups;
    if (g && g.members.length > 0) throw refuse(g.members.length);
    if (!g || g.state === 'Dead') return false;
    try {
      await admin.deleteGroups([groupId]);
      return true;
    } catch (err) {
      const type = (err as { groups?: { error?: { type?: string } }[] }).groups?.[0]?.error?.type;
      // A member joined between the look and the delete.
      if (type === 'NON_EMPTY_GROUP') throw refuse(null, err);
      if (type === 'GROUP_ID_NOT_FOUND') return false;
      throw err;
    }
  });
}
