import { hostname } from 'node:os';
import { announceWorker, forgetWorkers, instanceKey, type AvroCodec } from '@kairos/kafka';
import type { WorkerHeartbeatRecord } from '@kairos/schemas';
import type { Producer } from 'kafkajs';
import type { WorkerLogger } from './options.js';

export interface RegistrationOptions {
  readonly producer: Producer;
  readonly codec: AvroCodec;
  /** kairos.workers (with the deployment's prefix). */
  readonly topic: string;
  readonly service: string;
  readonly groupId: string;
  readonly workerId: string;
  readonly resourceClasses: readonly string[];
  /** It reads its service's own topics (the delay tier routes its types there). */
  readonly serviceTopics: boolean;
  /** The job types handled, read at each heartbeat (handlers may be added after start). */
  readonly jobTypes: () => string[];
  readonly intervalMs: number;
  readonly logger: WorkerLogger;
}

/**
 * A worker's presence on kairos.workers: a heartbeat naming its service, group,
 * classes and handled types on start and every interval, a tombstone on a clean stop (compaction
 * then forgets it). A failed heartbeat is logged and the next one tries again: the registry is
 * what operators see, not what runs jobs.
 */
export class Registration {
  readonly #o: RegistrationOptions;
  readonly #startedAt = Date.now();
  #timer: NodeJS.Timeout | undefined;
  #sending: Promise<void> = Promise.resolve();

  constructor(options: RegistrationOptions) {
    this.#o = options;
  }

  /** Sends the first heartbeat (awaited: a worker that cannot register fails to start), then every interval. */
  async start(): Promise<void> {
    await this.#send();
    this.#timer = setInterval(() => {
      this.#sending = this.#send().catch((err: unknown) =>
        this.#o.logger.warn({ err }, 'worker heartbeat on kairos.workers failed; trying again next interval'),
      );
    }, this.#o.intervalMs);
    this.#timer.unref();
  }

  /** Stops the heartbeats and says this worker is gone (a tombstone of its instance; its group stays). */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#sending;
    await forgetWorkers(this.#o.producer, this.#o.topic, [instanceKey(this.#o.groupId, this.#o.workerId)]);
  }

  async #send(): Promise<void> {
    const o = this.#o;
    const record: WorkerHeartbeatRecord = {
      service: o.service,
      group_id: o.groupId,
      worker_id: o.workerId,
      host: hostname(),
      pid: process.pid,
      resource_classes: [...o.resourceClasses],
      job_types: o.jobTypes().sort(),
      started_at: this.#startedAt,
      sent_at: Date.now(),
      interval_ms: o.intervalMs,
      service_topics: o.serviceTopics,
    };
    await announceWorker(o.producer, o.codec, o.topic, record);
  }
}
