import { CANARY_TYPE, LifecycleService, RoutingTable } from '@kairos/core';
import {
  instanceKey,
  isLive,
  readWorkerRegistry,
  tailTopic,
  type Announced,
  type AvroCodec,
  RecordDecoder,
} from '@kairos/kafka';
import type { Logger } from '@kairos/observability';
import { SCHEMAS, type WorkerHeartbeatRecord } from '@kairos/schemas';
import type { Kafka } from 'kafkajs';

export interface WorkerRoutesOptions {
  readonly kafka: Kafka;
  readonly codec: AvroCodec;
  /** kairos.workers (with the deployment's prefix). */
  readonly topic: string;
  readonly log: Logger;
  /** How often liveness is judged again (a worker silent for 3 intervals drops out), ms. Default: 1,000. */
  readonly refreshMs?: number;
}

/**
 * The dispatcher's view of which live workers handle which job types, per class: kairos.workers
 * read to its end on start (dispatching waits for it), then followed. The routing table is built
 * again on every heartbeat that changes a worker's classes or types, and every `refreshMs` (a
 * worker that stopped heartbeating drops out).
 */
export class WorkerRoutes extends LifecycleService {
  readonly #o: WorkerRoutesOptions;
  readonly #instances = new Map<string, Announced>();
  readonly #abort = new AbortController();
  #table: RoutingTable | undefined;
  #timer: NodeJS.Timeout | undefined;
  #following: Promise<void> = Promise.resolve();

  constructor(options: WorkerRoutesOptions) {
    super('worker-routes');
    this.#o = options;
  }

  /** The routing of the moment; undefined before the registry was first read. */
  table(): RoutingTable | undefined {
    return this.#table;
  }

  protected async onStart(): Promise<void> {
    const { instances } = await readWorkerRegistry(this.#o.kafka, this.#o.codec.registry, this.#o.topic);
    for (const a of instances)
      this.#instances.set(instanceKey(a.heartbeat.group_id, a.heartbeat.worker_id), a);
    this.#rebuild();
    this.#timer = setInterval(() => this.#rebuild(), this.#o.refreshMs ?? 1000);
    this.#following = this.#follow();
  }

  protected async onStop(): Promise<void> {
    clearInterval(this.#timer);
    this.#abort.abort();
    await this.#following;
  }

  async #follow(): Promise<void> {
    const decoder = new RecordDecoder<WorkerHeartbeatRecord>(
      this.#o.codec.registry,
      this.#o.topic,
      SCHEMAS.workerHeartbeat,
    );
    while (!this.#abort.signal.aborted) {
      try {
        const records = tailTopic(this.#o.kafka, {
          topic: this.#o.topic,
          start: { from: 'end', last: 0 },
          follow: true,
          maxWaitMs: 5000,
          signal: this.#abort.signal,
        });
        for await (const r of records) {
          const key = r.key?.toString('utf8') ?? '';
          if (!key.startsWith('worker:')) continue;
          const decoded = r.value === null ? undefined : await decoder.decode(r.value);
          if (decoded?.ok)
            this.#instances.set(key, { heartbeat: decoded.record, seenAt: r.timestamp.getTime() });
          else this.#instances.delete(key);
          this.#rebuild();
        }
      } catch (err) {
        if (this.#abort.signal.aborted) return;
        this.#o.log.warn({ err }, 'following kairos.workers failed; following it again shortly');
        await new Promise((r) => setTimeout(r, 1000));
      }
    }
  }

  #rebuild(): void {
    const now = Date.now();
    const live = [...this.#instances.values()].filter((a) => isLive(a, now));
    this.#table = new RoutingTable(
      live.map((a) => ({
        service: a.heartbeat.service,
        serviceTopics: a.heartbeat.service_topics,
        resourceClasses: a.heartbeat.resource_classes,
        // Every worker answers Kairos's canaries by itself: its heartbeat leaves them out.
        jobTypes: [...a.heartbeat.job_types, CANARY_TYPE],
      })),
    );
  }
}
