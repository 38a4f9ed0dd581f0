import { fetchTopicOffsetsSettled, groupMemberConfig, type AvroCodec } from '@kairos/kafka';
import type {
  RejectedFieldRecord,
  RejectionReason,
  ScheduleRequestOutcomeRecord,
  ScheduleRequestRejectionRecord,
} from '@kairos/schemas';
import type { Consumer, Kafka } from 'kafkajs';
import type { ClientLogger } from './options.js';

/** What became of a request: applied, or rejected with a reason. */
export type RequestOutcome =
  | {
      readonly status: 'accepted';
      readonly requestId: string;
      /** CreateJob, CancelJob, …, CreateSchedule, PauseSchedule… (a string: commands can be added). */
      readonly command: string;
      /** The job the command concerns (TriggerSchedule: its run); '' for the other schedule commands. */
      readonly jobId: string;
      /**
       * The job's state after the command (SCHEDULED after a create, CANCELLED after a cancel…); for a
       * schedule command other than TriggerSchedule, the schedule's (ACTIVE, PAUSED, DELETED).
       */
      readonly state: string;
      /**
       * The idempotency key had been applied before: nothing changed; jobId (scheduleId) is that
       * request's job (schedule), as it is now.
       */
      readonly duplicate: boolean;
      /** The job's due time; for a schedule command without a job, nextFireAt (or when it was applied). */
      readonly dueAt: Date;
      /** The job's version (the schedule's, for a schedule command other than TriggerSchedule). */
      readonly version: number;
      /** Schedule commands: the schedule created, changed or triggered; null for job commands. */
      readonly scheduleId: string | null;
      /** Schedule commands: when the schedule fires next; null when it does not (paused, deleted, ended). */
      readonly nextFireAt: Date | null;
    }
  | {
      readonly status: 'rejected';
      readonly requestId: string;
      readonly reason: RejectionReason;
      readonly message: string;
      readonly fields: readonly RejectedFieldRecord[];
    };

/** No outcome arrived in time. The request may still be applied later: it was produced durably. */
export class OutcomeTimeoutError extends Error {
  override readonly name = 'OutcomeTimeoutError';
  constructor(
    readonly requestId: string,
    timeoutMs: number,
  ) {
    super(`no outcome for request ${requestId} within ${timeoutMs} ms`);
  }
}

interface Slot {
  readonly promise: Promise<RequestOutcome>;
  readonly settle: (outcome: RequestOutcome) => void;
  readonly fail: (err: Error) => void;
  /** Dropped after this (epoch ms); a longer wait() extends it. */
  expires: number;
}

/**
 * Follows the reply and rejection topics and settles the requests this client sent, by request id.
 * A slot is opened before each request is produced, so an answer can never arrive unseen; it
 * keeps the answer until `timeoutMs` after the send (or longer, while someone waits). The consumer starts at the topics'
 * ends as they were before start() returned (nothing older can answer a request of ours), and
 * commits no offsets, so its group vanishes with it.
 */
export class OutcomeListener {
  readonly #consumer: Consumer;
  readonly #codec: AvroCodec;
  readonly #replies: string;
  readonly #rejected: string;
  readonly #kafka: Kafka;
  readonly #timeoutMs: number;
  readonly #log: ClientLogger;
  readonly #slots = new Map<string, Slot>();
  #sweeper: NodeJS.Timeout | undefined;

  constructor(o: {
    kafka: Kafka;
    codec: AvroCodec;
    groupId: string;
    repliesTopic: string;
    rejectedTopic: string;
    timeoutMs: number;
    log: ClientLogger;
  }) {
    this.#kafka = o.kafka;
    this.#codec = o.codec;
    this.#replies = o.repliesTopic;
    this.#rejected = o.rejectedTopic;
    this.#timeoutMs = o.timeoutMs;
    this.#log = o.log;
    // read_committed (KafkaJS's default): answers are written in the ingest's transactions.
    this.#consumer = o.kafka.consumer(groupMemberConfig({ groupId: o.groupId }));
  }

  async start(): Promise<void> {
    const admin = this.#kafka.admin();
    await admin.connect();
    const ends = new Map<string, { partition: number; offset: string }[]>();
    try {
      for (const topic of [this.#replies, this.#rejected])
        ends.set(topic, await fetchTopicOffsetsSettled(admin, topic));
    } finally {
      await admin.disconnect();
    }
    const joined = new Promise<void>((resolve) => {
      const off = this.#consumer.on(this.#consumer.events.GROUP_JOIN, () => {
        off();
        resolve();
      });
    });
    await this.#consumer.connect();
    await this.#consumer.subscribe({ topics: [this.#replies, this.#rejected], fromBeginning: false });
    await this.#consumer.run({
      autoCommit: false,
      eachMessage: async ({ topic, message }) => {
        if (!message.value) return;
        try {
          const record = await this.#codec.decode(topic, message.value);
          this.#answer(topic, record);
        } catch (err) {
          this.#log.warn({ err, topic, offset: message.offset }, 'outcome not decoded; skipped');
        }
      },
    });
    await joined;
    // Back to where the topics ended before any request of ours was sent: the group's own start
    // position ("latest" when it first fetches) could be later than an early answer.
    for (const [topic, offsets] of ends) {
      for (const { partition, offset } of offsets) this.#consumer.seek({ topic, partition, offset });
    }
    this.#sweeper = setInterval(() => this.#expire(), 1000);
    this.#sweeper.unref();
  }

  async stop(): Promise<void> {
    if (this.#sweeper) clearInterval(this.#sweeper);
    await this.#consumer.disconnect();
    for (const [id, slot] of this.#slots)
      slot.fail(new Error(`client closed before request ${id} was answered`));
    this.#slots.clear();
  }

  /** Opens the slot of a request about to be sent. */
  expect(requestId: string): void {
    if (this.#slots.has(requestId)) return;
    let settle!: (o: RequestOutcome) => void;
    let fail!: (e: Error) => void;
    const promise = new Promise<RequestOutcome>((resolve, reject) => {
      settle = resolve;
      fail = reject;
    });
    // Nobody may ever await it; its expiry must not be an unhandled rejection.
    promise.catch(() => undefined);
    this.#slots.set(requestId, { promise, settle, fail, expires: Date.now() + this.#timeoutMs });
  }

  /** Forgets a slot (its request was never sent). */
  cancel(requestId: string): void {
    this.#slots.delete(requestId);
  }

  /**
   * The outcome of a request this client sent, within timeoutMs (default: what is left of the
   * outcomeTimeoutMs counted from its send). An answered request keeps its outcome until then.
   */
  wait(requestId: string, timeoutMs?: number): Promise<RequestOutcome> {
    const slot = this.#slots.get(requestId);
    if (!slot) return Promise.reject(new OutcomeTimeoutError(requestId, this.#timeoutMs));
    const ms = timeoutMs ?? Math.max(0, slot.expires - Date.now());
    slot.expires = Math.max(slot.expires, Date.now() + ms);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new OutcomeTimeoutError(requestId, ms)), ms);
    });
    return Promise.race([slot.promise, timeout]).finally(() => clearTimeout(timer));
  }

  #answer(topic: string, record: unknown): void {
    const requestId = (record as { request_id?: unknown }).request_id;
    if (typeof requestId !== 'string') return;
    // Another producer's request (or one whose slot expired): not ours to answer.
    const slot = this.#slots.get(requestId);
    if (!slot) return;
    slot.settle(
      topic === this.#replies
        ? accepted(record as ScheduleRequestOutcomeRecord)
        : rejected(record as ScheduleRequestRejectionRecord),
    );
  }

  #expire(): void {
    const now = Date.now();
    for (const [id, slot] of this.#slots) {
      if (slot.expires > now) continue;
      this.#slots.delete(id);
      slot.fail(new OutcomeTimeoutError(id, this.#timeoutMs));
    }
  }
}

function accepted(r: ScheduleRequestOutcomeRecord): RequestOutcome {
  return {
    status: 'accepted',
    requestId: r.request_id,
    command: r.command,
    jobId: r.job_id,
    state: r.state,
    duplicate: r.duplicate,
    dueAt: new Date(r.due_at),
    version: r.version,
    // Outcomes written before these fields existed have neither.
    scheduleId: r.schedule_id ?? null,
    nextFireAt: r.next_fire_at === null || r.next_fire_at === undefined ? null : new Date(r.next_fire_at),
  };
}

function rejected(r: ScheduleRequestRejectionRecord): RequestOutcome {
  return {
    status: 'rejected',
    requestId: r.request_id ?? '',
    reason: r.reason,
    message: r.message,
    fields: r.fields.map(({ field, message }) => ({ field, message })),
  };
}
