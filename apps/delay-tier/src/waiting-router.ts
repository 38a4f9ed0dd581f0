import { LifecycleService, type RoutingTable } from '@kairos/core';
import {
  HandoffConsumer,
  headerString,
  HEADERS,
  RecordDecoder,
  type AvroCodec,
  type TopicNames,
} from '@kairos/kafka';
import type { Logger } from '@kairos/observability';
import { SCHEMAS, type TaskDispatchRecord } from '@kairos/schemas';
import { Gauge, type Registry } from 'prom-client';
import type { Kafka, KafkaMessage, Message, Producer } from 'kafkajs';

export interface WaitingRouterOptions {
  readonly kafka: Kafka;
  readonly codec: AvroCodec;
  readonly producer: Producer;
  readonly topics: TopicNames;
  readonly resourceClasses: readonly string[];
  /** The consumer group of the waiting topics. */
  readonly groupId: string;
  readonly routes: () => RoutingTable | undefined;
  readonly registry: Registry;
  readonly log: Logger;
  /** How often held tasks are routed again, ms. Default: 1,000. */
  readonly intervalMs?: number;
  /** Exported as `kairos_tasks_waiting_alert_after_seconds` for the KairosTasksWaiting rule, ms. */
  readonly alertAfterMs: number;
  /** Tasks held in memory at most; past it the waiting topics are paused. Default: 10,000. */
  readonly maxHeld?: number;
}

/** A task held here, in its partition's order. */
interface Held {
  readonly offset: string;
  readonly message: KafkaMessage;
  /** Decoded once (undefined until then, and for one that never decodes: routed = true). */
  task: TaskDispatchRecord | undefined;
  /** When it entered the waiting topic (its record's timestamp: a restarted tier keeps the age). */
  readonly since: number;
  routed: boolean;
}

/** Tasks given back this many times are routed at most once a minute (no ping-pong). */
const MAX_QUICK_RETURNS = 10;
const SLOW_RETRY_MS = 60_000;

/**
 * The waiting room of each class (`kairos.waiting.<class>`): tasks whose type no live worker
 * handled when they were dispatched, and tasks workers gave back for want of a handler. Each is
 * held until the routing shows a live worker that handles its type, then sent on to that
 * service's topic (or the class topic), unchanged but re-encoded for it; each partition is
 * committed up to its first task still waiting. Exports how many wait, by class and type.
 */
export class WaitingRouter extends LifecycleService {
  readonly #o: WaitingRouterOptions;
  readonly #consumer: HandoffConsumer;
  readonly #held = new Map<string, Held[]>();
  /** The offset last committed per partition held here. */
  readonly #committed = new Map<string, string>();
  readonly #decoders = new Map<string, RecordDecoder<TaskDispatchRecord>>();
  #timer: NodeJS.Timeout | undefined;
  #routing: Promise<void> = Promise.resolve();
  #size = 0;
  #full = false;

  constructor(options: WaitingRouterOptions) {
    super('waiting router');
    this.#o = options;
    this.#consumer = new HandoffConsumer({
      kafka: options.kafka,
      groupId: options.groupId,
      topics: options.resourceClasses.map((rc) => options.topics.waiting(rc)),
      partitionsConsumedConcurrently: 4,
      take: (topic, partition, messages) => this.#take(topic, partition, messages),
      onAssignment: (a) => this.#keepOnly(a),
      onRebalancing: () => undefined,
      onCrash: (err) => options.log.error({ err }, 'waiting router consumer crashed'),
    });
    this.#gauge();
  }

  protected async onStart(): Promise<void> {
    await this.#consumer.start();
    this.#timer = setInterval(() => {
      this.#routing = this.#routing
        .then(() => this.#routeAll())
        .catch((err: unknown) => this.#o.log.warn({ err }, 'routing waiting tasks failed; trying again'));
    }, this.#o.intervalMs ?? 1000);
  }

  protected async onStop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#routing;
    await this.#consumer.stop();
  }

  #take(topic: string, partition: number, messages: readonly KafkaMessage[]): number {
    const room = (this.#o.maxHeld ?? 10_000) - this.#size;
    const taken = messages.slice(0, Math.max(0, room));
    const list = this.#held.get(`${topic}/${partition}`) ?? [];
    this.#held.set(`${topic}/${partition}`, list);
    for (const message of taken) {
      list.push({
        offset: message.offset,
        message,
        task: undefined,
        since: Number(message.timestamp),
        routed: false,
      });
    }
    this.#size += taken.length;
    if (taken.length < messages.length) {
      this.#full = true;
      this.#consumer.pause();
    }
    return taken.length;
  }

  /** A partition taken away: its held tasks are the next owner's (nothing was committed past them). */
  #keepOnly(assignment: ReadonlyMap<string, ReadonlySet<number>>): void {
    for (const key of [...this.#held.keys()]) {
      const [topic, partition] = splitKey(key);
      if (!assignment.get(topic)?.has(partition)) {
        this.#size -= this.#held.get(key)?.length ?? 0;
        this.#held.delete(key);
        this.#committed.delete(key);
      }
    }
  }

  async #routeAll(): Promise<void> {
    const table = this.#o.routes();
    if (!table) return;
    const now = Date.now();
    const out = new Map<string, Message[]>();
    const sent: Held[] = [];
    for (const [key, list] of this.#held) {
      const [topic] = splitKey(key);
      for (const h of list) {
        if (h.routed) continue;
        const task = h.task ?? (await this.#decode(topic, h));
        if (!task) continue;
        const returns = Number(headerString(h.message.headers, HEADERS.returns) ?? 0) || 0;
        if (returns >= MAX_QUICK_RETURNS && now - h.since < SLOW_RETRY_MS) continue;
        const route = table.route(task.resource_class, task.job_type, task.job_id);
        if (route.kind === 'waiting') continue;
        const target =
          route.kind === 'service'
            ? this.#o.topics.serviceTasks(task.resource_class, route.service)
            : this.#o.topics.tasks(task.resource_class);
        const value = await this.#o.codec.encode(target, SCHEMAS.taskDispatch, task);
        out.set(target, [
          ...(out.get(target) ?? []),
          { key: task.job_id, value, headers: h.message.headers ?? {} },
        ]);
        sent.push(h);
      }
    }
    if (out.size === 0) return this.#commit();
    const topicMessages = [...out].map(([topic, messages]) => ({ topic, messages }));
    await this.#o.producer.sendBatch({ acks: -1, topicMessages });
    for (const h of sent) h.routed = true;
    await this.#commit();
  }

  async #decode(topic: string, h: Held): Promise<TaskDispatchRecord | undefined> {
    let decoder = this.#decoders.get(topic);
    if (!decoder) {
      decoder = new RecordDecoder(this.#o.codec.registry, topic, SCHEMAS.taskDispatch);
      this.#decoders.set(topic, decoder);
    }
    const d = await decoder.decode(h.message.value);
    if (d.ok) {
      h.task = d.record;
      return d.record;
    }
    // Never routable: logged and passed (committed) like a routed one.
    this.#o.log.error({ topic, offset: h.offset, reason: d.reason }, `waiting task set aside: ${d.message}`);
    h.routed = true;
    return undefined;
  }

  /**
   * Commits each partition up to its first task still waiting, and forgets what is behind it. A
   * partition whose first task still waits is committed at that task, once: so the group's lag
   * (`kairos status`) counts the waiting tasks from the oldest on, also before any was routed.
   */
  async #commit(): Promise<void> {
    const offsets = [];
    for (const [key, list] of this.#held) {
      let n = 0;
      while (n < list.length && list[n]?.routed) n++;
      const next = n === 0 ? list[0]?.offset : String(Number(list[n - 1]?.offset) + 1);
      if (next === undefined || this.#committed.get(key) === next) continue;
      const [topic, partition] = splitKey(key);
      offsets.push({ topic, partition, offset: next, key });
      list.splice(0, n);
      this.#size -= n;
    }
    await this.#consumer.commit(offsets.map(({ key: _, ...o }) => o));
    for (const o of offsets) this.#committed.set(o.key, o.offset);
    if (this.#full && this.#size < (this.#o.maxHeld ?? 10_000) / 2) {
      this.#full = false;
      this.#consumer.resume();
    }
  }

  #gauge(): void {
    const held = () => [...this.#held.values()].flat().filter((h) => !h.routed && h.task);
    new Gauge({
      name: 'kairos_tasks_waiting',
      help: 'Tasks whose type no live worker handles, held by the delay tier until one does, by class and job type',
      labelNames: ['resource_class', 'job_type'] as const,
      registers: [this.#o.registry],
      collect() {
        this.reset();
        for (const h of held())
          this.inc({ resource_class: h.task?.resource_class, job_type: h.task?.job_type });
      },
    });
    new Gauge({
      name: 'kairos_tasks_waiting_oldest_seconds',
      help: 'How long the oldest task held for want of a handler has waited, by class',
      labelNames: ['resource_class'] as const,
      registers: [this.#o.registry],
      collect() {
        this.reset();
        const oldest = new Map<string, number>();
        for (const h of held()) {
          const rc = h.task?.resource_class ?? '';
          oldest.set(rc, Math.min(oldest.get(rc) ?? h.since, h.since));
        }
        const now = Date.now();
        for (const [rc, since] of oldest) this.set({ resource_class: rc }, (now - since) / 1000);
      },
    });
    const after = new Gauge({
      name: 'kairos_tasks_waiting_alert_after_seconds',
      help: 'KairosTasksWaiting fires once the oldest waiting task of a class has waited longer than this',
      labelNames: ['resource_class'] as const,
      registers: [this.#o.registry],
    });
    for (const rc of this.#o.resourceClasses) after.set({ resource_class: rc }, this.#o.alertAfterMs / 1000);
  }
}

function splitKey(key: string): [string, number] {
  const at = key.lastIndexOf('/');
  return [key.slice(0, at), Number(key.slice(at + 1))];
}
