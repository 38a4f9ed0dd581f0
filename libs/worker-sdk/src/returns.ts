import { HEADERS, type AvroCodec, type TopicNames } from '@kairos/kafka';
import { SCHEMAS } from '@kairos/schemas';
import type { Producer } from 'kafkajs';
import type { Task } from './task-pool.js';

/**
 * Gives back a task this worker has no handler for (a rolling deploy removed it, or the routing
 * had not seen the change yet): the task goes unchanged to its class's waiting topic with its
 * return count raised, and the delay tier routes it to a service that handles its type. It is
 * never claimed here, so it uses none of the job's attempts and is never dead-lettered for it.
 */
export class TaskReturns {
  readonly #producer: Producer;
  readonly #codec: AvroCodec;
  readonly #topics: TopicNames;

  constructor(producer: Producer, codec: AvroCodec, topics: TopicNames) {
    this.#producer = producer;
    this.#codec = codec;
    this.#topics = topics;
  }

  /** Resolves once Kafka has the task on the waiting topic (acks=all). */
  async giveBack(task: Task): Promise<void> {
    const d = task.dispatch;
    const topic = this.#topics.waiting(d.resource_class);
    const value = await this.#codec.encode(topic, SCHEMAS.taskDispatch, d);
    const headers: Record<string, string> = {
      [HEADERS.jobId]: d.job_id,
      [HEADERS.tenant]: d.tenant_id,
      [HEADERS.epoch]: String(d.epoch),
      [HEADERS.fence]: String(d.fence),
      [HEADERS.attempt]: String(d.attempt),
      [HEADERS.dueAt]: String(d.due_at),
      [HEADERS.returns]: String(task.returns + 1),
      ...(task.traceparent !== null && { [HEADERS.traceparent]: task.traceparent }),
    };
    await this.#producer.send({ topic, acks: -1, messages: [{ key: d.job_id, value, headers }] });
  }
}
