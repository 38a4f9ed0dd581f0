import { isKairosError } from '@kairos/core';
import { expireJobs, type Pool } from '@kairos/db';
import { HEADERS, type AvroCodec, type TopicNames } from '@kairos/kafka';
import type { Logger } from '@kairos/observability';
import type { HotSet } from '@kairos/redis';
import { SCHEMAS } from '@kairos/schemas';
import type { Message, Producer } from 'kafkajs';
import type { Ownership } from './ownership.js';
import { taskDispatch, type HotRecord } from './record.js';

export interface DispatcherOptions {
  readonly hot: HotSet;
  readonly ownership: Ownership;
  /** Where jobs whose deadline passed are marked EXPIRED. */
  readonly pool: Pool;
  readonly producer: Producer;
  readonly codec: AvroCodec;
  readonly topics: TopicNames;
  readonly log: Logger;
  /** Most jobs popped per partition per round. */
  readonly batchSize: number;
  /** Pause between rounds when nothing was due. */
  readonly idleMs: number;
  /** Called for every dispatched job (metrics, tests). */
  readonly onDispatched?: (record: HotRecord, dispatchedAtMs: number) => void;
  /** Called for every job that expired instead of being dispatched. */
  readonly onExpired?: (record: HotRecord) => void;
}

/**
 * The dispatch loop: pops due jobs of every owned partition (on Redis time, epoch-checked),
 * produces them to their resource class's task topic, and acknowledges them in Redis only after
 * Kafka acknowledged the write. One loop, never overlapping itself.
 */
export class Dispatcher {
  readonly #o: DispatcherOptions;
  #running = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  /** Task topics whose schema this process registered (registration is idempotent, but a round trip). */
  readonly #registered = new Set<string>();

  constructor(options: DispatcherOptions) {
    this.#o = options;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#wake?.();
    await this.#loop;
  }

  async #run(): Promise<void> {
    while (this.#running) {
      let busy = false;
      for (const partition of this.#o.ownership.owned()) {
        try {
          if ((await this.#dispatchPartition(partition)) >= this.#o.batchSize) busy = true;
        } catch (err) {
          // One partition's failure (Redis, Kafka, PostgreSQL) must not stall the others; its
          // popped jobs stay in flight and are reclaimed.
          this.#o.log.error({ err, partition }, 'dispatch failed for a partition; retrying next round');
        }
      }
      if (!busy) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, this.#o.idleMs);
          this.#wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
    }
  }

  /** A task message; a class first seen here (not configured at start) gets its schema registered. */
  async #message(topic: string, record: HotRecord, epoch: number, nowMs: number): Promise<Message> {
    if (!this.#registered.has(topic)) {
      await this.#o.codec.register(topic, SCHEMAS.taskDispatch);
      this.#registered.add(topic);
    }
    const headers: Record<string, string> = {
      [HEADERS.jobId]: record.job_id,
      [HEADERS.tenant]: record.tenant_id,
      [HEADERS.epoch]: String(epoch),
      [HEADERS.fence]: String(record.fence),
      [HEADERS.attempt]: String(record.attempt),
      [HEADERS.dueAt]: String(record.due_at),
    };
    if (record.traceparent) headers[HEADERS.traceparent] = record.traceparent;
    return {
      key: record.job_id,
      value: await this.#o.codec.encode(topic, taskDispatch(record, epoch, nowMs)),
      headers,
    };
  }

  async #dispatchPartition(partition: number): Promise<number> {
    const epochP = this.#o.ownership.epoch(partition);
    if (!epochP) return 0;
    const epoch = await epochP;
    try {
      const { nowMs, jobs } = await this.#o.hot.popDue(partition, epoch, this.#o.batchSize);
      if (jobs.length === 0) return 0;
      const byTopic = new Map<string, { messages: Message[]; records: HotRecord[] }>();
      const expired: HotRecord[] = [];
      for (const job of jobs) {
        const record = JSON.parse(job.record) as HotRecord;
        // Deadline passed by Redis time: the job is not worth running any more.
        if (record.deadline_at !== null && record.deadline_at < nowMs) {
          expired.push(record);
          continue;
        }
        const topic = this.#o.topics.tasks(record.resource_class);
        const group = byTopic.get(topic) ?? { messages: [], records: [] };
        byTopic.set(topic, group);
        group.records.push(record);
        group.messages.push(await this.#message(topic, record, epoch, nowMs));
      }
      if (expired.length > 0) {
        await expireJobs(
          this.#o.pool,
          expired.map((r) => ({
            jobId: r.job_id,
            dueAt: new Date(r.due_at),
            deadlineAt: new Date(r.deadline_at ?? 0),
          })),
        );
      }
      // Each resource class on its own: a class whose topic is missing or failing keeps its jobs
      // in flight (reclaimed and retried) without holding back the other classes' jobs.
      const sent: HotRecord[] = [];
      for (const [topic, group] of byTopic) {
        try {
          await this.#o.producer.send({ topic, acks: -1, messages: group.messages });
          sent.push(...group.records);
        } catch (err) {
          this.#o.log.error(
            { err, topic, jobs: group.records.length },
            'dispatch to a task topic failed; will retry',
          );
        }
      }
      await this.#o.hot.ack(
        partition,
        epoch,
        [...sent, ...expired].map((r) => ({ jobId: r.job_id, version: r.version })),
      );
      for (const r of expired) this.#o.onExpired?.(r);
      this.#o.log.debug({ partition, epoch, jobs: jobs.length }, 'dispatched');
      for (const r of sent) this.#o.onDispatched?.(r, nowMs);
      return jobs.length;
    } catch (err) {
      if (isKairosError(err, 'STALE_EPOCH')) {
        await this.#o.ownership.onStale(partition, epoch);
        return 0;
      }
      throw err;
    }
  }
}
