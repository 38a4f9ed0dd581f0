import { LifecycleService, validTraceparent } from '@kairos/core';
import {
  AvroCodec,
  Compatibility,
  groupMemberConfig,
  headerString,
  HEADERS,
  RecordDecoder,
  setCompatibility,
  valueSubject,
} from '@kairos/kafka';
import { createIngestMetrics, type IngestMetrics } from '@kairos/observability';
import { SCHEMAS, type RejectionReason, type ScheduleRequestRecord } from '@kairos/schemas';
import type { Consumer, EachBatchPayload, KafkaMessage, Producer } from 'kafkajs';
import { AnswerWriter, type Answer } from './answers.js';
import { RequestApplier, type Pending } from './apply.js';
import { compileIngestOptions, type CompiledIngestOptions, type IngestOptions } from './options.js';
import { outcomeRecord } from './outcomes.js';
import { commandName, mapRequest } from './request-commands.js';
import { fieldsRejection, rejectionRecord, type Rejection } from './rejections.js';
import { tenantRefusal } from './tenant-policy.js';

/** One message of a batch on its way: decoded (or rejected), then applied (or rejected). */
interface Work {
  readonly message: KafkaMessage;
  decoded?: {
    readonly schemaId: number | null;
    /** The request and its command's name, when the value decoded. */
    readonly request?: ScheduleRequestRecord;
    readonly command?: string;
    /** Set when the request goes on to the command handlers. */
    readonly pending?: Pending;
  };
  /** Set when the request is rejected before it reaches the command handlers. */
  rejection?: Rejection;
}

/** Counters since start (tests, logs). */
export interface IngestStats {
  accepted: number;
  duplicates: number;
  rejected: Partial<Record<RejectionReason, number>>;
  /** Transient failures waited out (PostgreSQL or the registry down, a failed Kafka transaction). */
  retries: number;
}

const FENCED = new Set([
  'INVALID_PRODUCER_EPOCH',
  'PRODUCER_FENCED',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
]);

/**
 * The Kafka ingress: consumes `schedule-requests` in batches and applies each request through the
 * same command handlers as the HTTP API. Per batch: decode every value (through the registry),
 * apply the requests in offset order (PostgreSQL transactions), then, in one Kafka transaction,
 * publish an outcome (replies topic) or a rejection (rejected topic) per request together with the
 * batch's consumer offset. So offsets move only after PostgreSQL committed, and outcomes,
 * rejections and offsets are committed together: a request is answered exactly once. A request
 * read again after a crash between the two commits is deduplicated by its idempotency key
 * (per tenant) and answered as a duplicate.
 *
 * A transient failure (PostgreSQL or the registry down, a failed Kafka transaction) is retried
 * with backoff inside the batch, heartbeating meanwhile, keeping what was already decided; the
 * batch is abandoned unresolved (and read again) only when the consumer stops or rebalances.
 */
export class Ingest extends LifecycleService {
  readonly #o: CompiledIngestOptions;
  readonly #consumer: Consumer;
  readonly #producer: Producer;
  readonly #codec: AvroCodec;
  readonly #decoder: RecordDecoder<ScheduleRequestRecord>;
  readonly #applier: RequestApplier;
  readonly #answers: AnswerWriter;
  readonly #stats: IngestStats = { accepted: 0, duplicates: 0, rejected: {}, retries: 0 };
  /** Prometheus metrics (the entry point serves them on /metrics). */
  readonly metrics: IngestMetrics = createIngestMetrics();

  constructor(options: IngestOptions) {
    super('ingest');
    this.#o = compileIngestOptions(options);
    const { kafka } = this.#o;
    this.#consumer = kafka.consumer(
      groupMemberConfig({ groupId: this.#o.groupId, sessionTimeoutMs: this.#o.sessionTimeoutMs }),
    );
    this.#producer = kafka.producer({
      transactionalId: this.#o.transactionalId,
      idempotent: true,
      maxInFlightRequests: 1,
      // A transaction is open only while one batch's answers are written: seconds at most. If the
      // process dies meanwhile, read_committed readers wait this long (unless it restarts first).
      transactionTimeout: 30_000,
    });
    this.#codec = new AvroCodec(this.#o.registry);
    this.#answers = new AnswerWriter({
      producer: this.#producer,
      codec: this.#codec,
      topics: this.#o.topics,
      groupId: this.#o.groupId,
    });
    this.#decoder = new RecordDecoder(
      this.#o.registry,
      this.#o.topics.scheduleRequests,
      SCHEMAS.scheduleRequest,
    );
    this.#applier = new RequestApplier({
      commands: this.#o.commands,
      schedules: this.#o.schedules,
      pool: this.#o.pool,
      maxCreatesPerTransaction: this.#o.maxCreatesPerTransaction,
      internalErrorAttempts: this.#o.internalErrorAttempts,
      log: this.#o.log,
    });
  }

  stats(): IngestStats {
    return { ...this.#stats, rejected: { ...this.#stats.rejected } };
  }

  protected async onStart(): Promise<void> {
    const { topics, registry } = this.#o;
    // Each subject gets its rule here, so it must exist first (the request schema's too, before any
    // producer registers). BACKWARD_TRANSITIVE: this reader must read every version ever registered
    // (producers upgrade on their own schedule), not only the one before it; the registry then
    // refuses any other change.
    const subjects: [string, object][] = [
      [topics.scheduleRequests, SCHEMAS.scheduleRequest],
      [topics.scheduleRequestsReplies, SCHEMAS.scheduleRequestOutcome],
      [topics.scheduleRequestsRejected, SCHEMAS.scheduleRequestRejection],
    ];
    for (const [topic, schema] of subjects) {
      await this.#codec.schemaId(topic, schema);
      await setCompatibility(registry, valueSubject(topic), Compatibility.BACKWARD_TRANSITIVE);
    }
    this.#consumer.on(this.#consumer.events.CRASH, (e) => {
      if (e.payload.restart) return;
      this.#o.log.fatal({ err: e.payload.error }, 'consumer crashed and will not restart');
      this.#o.onFatal(e.payload.error);
    });
    this.#consumer.on(this.#consumer.events.GROUP_JOIN, (e) => {
      this.#o.log.info({ assignment: e.payload.memberAssignment }, 'ingest joined its group');
    });
    await this.#producer.connect();
    await this.#consumer.connect();
    // From the beginning: a request produced before any ingest ever ran must still be applied.
    await this.#consumer.subscribe({ topic: topics.scheduleRequests, fromBeginning: true });
    await this.#consumer.run({
      // Offsets are committed in the Kafka transaction with the answers, never by the consumer.
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: this.#o.partitionsConsumedConcurrently,
      eachBatch: (payload) => this.#batch(payload),
    });
    this.#o.log.info(
      { topic: topics.scheduleRequests, groupId: this.#o.groupId, tenants: this.#o.tenants?.size ?? 'any' },
      'ingest started',
    );
  }

  protected async onStop(): Promise<void> {
    await this.#consumer
      .disconnect()
      .catch((err: unknown) => this.#o.log.warn({ err }, 'consumer disconnect'));
    await this.#producer
      .disconnect()
      .catch((err: unknown) => this.#o.log.warn({ err }, 'producer disconnect'));
  }

  async #batch({ batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const endTimer = this.metrics.batchSeconds.startTimer();
    const live = () => isRunning() && !isStale();
    // Long steps heartbeat as they go (KafkaJS sends one only when the interval is due).
    const beat = () => heartbeat().catch(() => undefined);
    const work: Work[] = batch.messages.map((message) => ({ message }));
    const steps: [string, () => Promise<void>][] = [
      ['decode', () => this.#decode(work, beat)],
      ['apply', () => this.#applier.apply(pendingOf(work), beat)],
      ['publish', () => this.#publish(batch.topic, batch.partition, work)],
    ];
    for (const [step, run] of steps) {
      if (!(await this.#persist(step, run, live, heartbeat))) return; // read again after the rebalance
    }
    resolveOffset(batch.lastOffset());
    endTimer();
    this.#count(work);
    this.#o.log.debug({ partition: batch.partition, requests: work.length }, 'batch applied');
    await heartbeat().catch(() => undefined);
  }

  /**
   * Runs a step until it succeeds, backing off (and heartbeating) after each failure. Returns
   * false if the consumer stops or loses the partition while the step keeps failing: the batch
   * is then left unresolved and uncommitted, to be read again by whoever owns the partition next.
   */
  async #persist(
    step: string,
    run: () => Promise<void>,
    live: () => boolean,
    heartbeat: () => Promise<void>,
  ): Promise<boolean> {
    let delay = this.#o.initialBackoffMs;
    const since = Date.now();
    for (let tries = 1; ; tries++) {
      // A healthy batch is finished even when the consumer is stopping (its answers are then
      // committed, not left to the next owner as duplicates); only retries give up.
      if (tries > 1 && !live()) return false;
      try {
        await run();
        if (tries > 1) {
          this.#o.log.info({ step, tries, waitedMs: Date.now() - since }, 'recovered; batch goes on');
        }
        return true;
      } catch (err) {
        if (isFenced(err)) {
          this.#o.log.fatal({ err }, 'the transactional producer was fenced by another instance');
          this.#o.onFatal(err as Error);
          return false;
        }
        this.#stats.retries++;
        this.metrics.transientFailures.inc({ step });
        // An outage retries every few seconds: the first failure and then every fifth say so
        // (with the stack once), not every try.
        if (tries === 1) this.#o.log.warn({ err, step }, 'transient failure; retrying with backoff');
        else if (tries % 5 === 0) {
          this.#o.log.warn(
            { step, tries, waitedMs: Date.now() - since, error: String(err) },
            'still failing; retrying',
          );
        }
      }
      const until = Date.now() + delay;
      while (Date.now() < until) {
        if (!live()) return false;
        await heartbeat().catch(() => undefined);
        await sleep(Math.min(1000, until - Date.now()));
      }
      delay = Math.min(delay * 2, this.#o.maxBackoffMs);
    }
  }

  /** Decodes every value not decoded yet; a registry outage throws (and is retried). */
  async #decode(work: readonly Work[], beat: () => Promise<void>): Promise<void> {
    for (const [i, w] of work.entries()) {
      if (w.decoded) continue;
      if (i % 100 === 99) await beat();
      const d = await this.#decoder.decode(w.message.value);
      if (!d.ok) {
        w.decoded = { schemaId: d.schemaId };
        w.rejection = { reason: d.reason, message: d.message, fields: [] };
        continue;
      }
      const refused = tenantRefusal(d.record.tenant, w.message, this.#o.tenants, this.#o.tenantSources);
      if (refused) {
        w.decoded = { schemaId: d.schemaId, command: commandName(d.record), request: d.record };
        w.rejection = refused;
        continue;
      }
      const mapped = mapRequest(d.record);
      if (!mapped.ok) {
        w.decoded = { schemaId: d.schemaId, command: mapped.name, request: d.record };
        w.rejection = fieldsRejection(mapped.fields);
        continue;
      }
      w.decoded = {
        schemaId: d.schemaId,
        command: mapped.command.name,
        request: d.record,
        pending: {
          request: d.record,
          command: mapped.command,
          traceparent: validTraceparent(headerString(w.message.headers, HEADERS.traceparent)),
          failures: 0,
        },
      };
    }
  }

  /** Every request's answer and the batch's next offset, in one Kafka transaction. */
  async #publish(topic: string, partition: number, work: readonly Work[]): Promise<void> {
    const last = work[work.length - 1]?.message.offset;
    if (last === undefined) return;
    const now = this.#o.now();
    const answers: Answer[] = work.map((w) => {
      const pending = w.decoded?.pending;
      const result = pending?.result;
      const rejection = w.rejection ?? (result?.kind === 'rejected' ? result.rejection : undefined);
      if (rejection) {
        const { request, command } = w.decoded ?? {};
        const record = rejectionRecord(
          { topic, partition, message: w.message },
          rejection,
          request && command !== undefined ? { request, command } : undefined,
          w.decoded?.schemaId ?? null,
          now,
        );
        return { kind: 'rejection', record, key: w.message.key ?? null };
      }
      if (!pending || result?.kind !== 'accepted') {
        throw new Error(`request at ${topic}/${partition}/${w.message.offset} has no result`);
      }
      const record = outcomeRecord(pending.request, commandName(pending.request), result, now);
      return { kind: 'outcome', record, traceparent: pending.traceparent };
    });
    await this.#answers.commit({ topic, partition, nextOffset: (BigInt(last) + 1n).toString() }, answers);
  }

  #count(work: readonly Work[]): void {
    const nowMs = Date.now();
    for (const w of work) {
      const result = w.decoded?.pending?.result;
      const rejection = w.rejection ?? (result?.kind === 'rejected' ? result.rejection : undefined);
      const command = w.decoded?.command ?? 'undecoded';
      const producedAt = Number(w.message.timestamp);
      if (Number.isFinite(producedAt) && producedAt > 0) {
        this.metrics.requestAgeSeconds.observe(Math.max(0, nowMs - producedAt) / 1000);
      }
      if (rejection) {
        this.metrics.requests.inc({ command, result: 'rejected' });
        this.metrics.rejections.inc({ reason: rejection.reason });
        this.#stats.rejected[rejection.reason] = (this.#stats.rejected[rejection.reason] ?? 0) + 1;
        this.#o.log.info(
          {
            reason: rejection.reason,
            offset: w.message.offset,
            message: rejection.message,
            traceparent: validTraceparent(headerString(w.message.headers, HEADERS.traceparent)) ?? undefined,
          },
          'request rejected',
        );
      } else if (result?.kind === 'accepted') {
        this.metrics.requests.inc({ command, result: result.duplicate ? 'duplicate' : 'accepted' });
        if (result.duplicate) this.#stats.duplicates++;
        else this.#stats.accepted++;
      }
    }
  }
}

function pendingOf(work: readonly Work[]): Pending[] {
  return work.flatMap((w) => (w.rejection || !w.decoded?.pending ? [] : [w.decoded.pending]));
}

function isFenced(err: unknown): boolean {
  const type = (err as { type?: unknown } | null)?.type;
  return typeof type === 'string' && FENCED.has(type);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, Math.max(0, ms)));
