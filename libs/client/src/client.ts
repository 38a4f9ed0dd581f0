import {
  AvroCodec,
  createKafka,
  createRegistryClient,
  HEADERS,
  topicNames,
  type TopicNames,
} from '@kairos/kafka';
import { SCHEMAS, type ScheduleCommandName, type ScheduleRequestRecord } from '@kairos/schemas';
import type { Kafka, Producer } from 'kafkajs';
import { v7 as uuidv7 } from 'uuid';
import { compileClientOptions, type CompiledClientOptions, type KairosClientOptions } from './options.js';
import { OutcomeListener, type RequestOutcome } from './outcomes.js';
import {
  commandBranch,
  createJobRecord,
  rescheduleJobRecord,
  type CancelJob,
  type CommandRecords,
  type RequestEnvelope,
  type RescheduleJob,
  type ScheduleJob,
  type SentRequest,
} from './requests.js';
import {
  createScheduleRecord,
  resumeScheduleRecord,
  updateScheduleRecord,
  type CreateSchedule,
  type ResumeSchedule,
  type ScheduleTarget,
  type UpdateSchedule,
} from './schedule-requests.js';
import { BatchSender } from './sender.js';

/**
 * The Kairos producer SDK: creates, cancels and reschedules jobs, and creates and changes
 * recurring schedules, by producing Avro schedule requests to `schedule-requests` (key: the idempotency key; idempotent producer, acks=all), for
 * the ingest to apply. A call resolves once Kafka has the request durably; with `outcomes: true`,
 * awaitOutcome() then says what the ingest made of it (accepted with the job id, or rejected with
 * a reason).
 */
export class KairosClient {
  readonly #o: CompiledClientOptions;
  readonly #topics: TopicNames;
  readonly #kafka: Kafka;
  readonly #producer: Producer;
  readonly #codec: AvroCodec;
  readonly #sender: BatchSender;
  readonly #outcomes: OutcomeListener | undefined;
  #state: 'new' | 'starting' | 'started' | 'closed' = 'new';
  #starting: Promise<void> | undefined;

  constructor(options: KairosClientOptions) {
    this.#o = compileClientOptions(options);
    this.#topics = topicNames(this.#o.topicPrefix);
    this.#kafka = createKafka({
      brokers: this.#o.brokers,
      clientId: this.#o.clientId,
      ssl: this.#o.ssl,
      sasl: this.#o.sasl,
    });
    this.#producer = this.#kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    this.#codec = new AvroCodec(
      createRegistryClient({
        url: this.#o.registryUrl,
        auth: this.#o.registryAuth,
        tls: this.#o.registryTls,
      }),
    );
    this.#sender = new BatchSender(this.#producer, this.#topics.scheduleRequests);
    this.#outcomes = this.#o.outcomes
      ? new OutcomeListener({
          kafka: this.#kafka,
          codec: this.#codec,
          groupId: this.#o.outcomeGroupId,
          repliesTopic: this.#topics.scheduleRequestsReplies,
          rejectedTopic: this.#topics.scheduleRequestsRejected,
          timeoutMs: this.#o.outcomeTimeoutMs,
          log: this.#o.logger,
        })
      : undefined;
  }

  /** Connects, registers the request schema and (with `outcomes`) starts following the answers. */
  start(): Promise<void> {
    this.#starting ??= this.#start();
    return this.#starting;
  }

  async #start(): Promise<void> {
    if (this.#state !== 'new') throw new Error(`client is ${this.#state}`);
    this.#state = 'starting';
    await this.#producer.connect();
    await this.#outcomes?.start();
    this.#state = 'started';
    this.#o.logger.info({ topic: this.#topics.scheduleRequests }, 'kairos client started');
  }

  /** Creates a job. Resolves once the request is in Kafka (not yet applied: see awaitOutcome). */
  schedule(job: ScheduleJob): Promise<SentRequest> {
    return this.#send('CreateJob', job, () => createJobRecord(job));
  }

  /** Cancels a job of the tenant that has not finished. */
  cancel(request: CancelJob): Promise<SentRequest> {
    return this.#send('CancelJob', request, () => ({ job_id: request.jobId }));
  }

  /** Moves a SCHEDULED job of the tenant to a new due time. */
  reschedule(request: RescheduleJob): Promise<SentRequest> {
    return this.#send('RescheduleJob', request, () => rescheduleJobRecord(request));
  }

  /**
   * Creates a recurring schedule (`POST /v1/schedules`); its first runs are generated as it is
   * applied. The idempotency key is the schedule's: the same key never creates a second one.
   */
  createSchedule(schedule: CreateSchedule): Promise<SentRequest> {
    return this.#send('CreateSchedule', schedule, () => createScheduleRecord(schedule));
  }

  /** Replaces a schedule's rules as a new version (`PUT /v1/schedules/{id}`; optionally If-Match). */
  updateSchedule(request: UpdateSchedule): Promise<SentRequest> {
    return this.#send('UpdateSchedule', request, () => updateScheduleRecord(request));
  }

  /** Stops running a schedule: its runs not dispatched yet whose time is ahead are cancelled. */
  pauseSchedule(request: ScheduleTarget): Promise<SentRequest> {
    return this.#send('PauseSchedule', request, () => ({ schedule_id: request.scheduleId }));
  }

  /** Runs a paused schedule again, from its next occurrence (or, with catchUp, its misfire policy). */
  resumeSchedule(request: ResumeSchedule): Promise<SentRequest> {
    return this.#send('ResumeSchedule', request, () => resumeScheduleRecord(request));
  }

  /** Deletes a schedule: its runs not dispatched yet are cancelled; it stays readable as DELETED. */
  deleteSchedule(request: ScheduleTarget): Promise<SentRequest> {
    return this.#send('DeleteSchedule', request, () => ({ schedule_id: request.scheduleId }));
  }

  /** One extra run of a schedule now (also while paused); the outcome's jobId is the run. */
  triggerSchedule(request: ScheduleTarget): Promise<SentRequest> {
    return this.#send('TriggerSchedule', request, () => ({ schedule_id: request.scheduleId }));
  }

  /**
   * What the ingest made of a request sent by this client: accepted (job id, state, duplicate) or
   * rejected (reason, message, fields). Needs `outcomes: true`. Rejects with OutcomeTimeoutError
   * after timeoutMs (default: outcomeTimeoutMs from the send); the request itself stays durable and
   * may still be applied.
   */
  awaitOutcome(request: SentRequest | string, options: { timeoutMs?: number } = {}): Promise<RequestOutcome> {
    if (!this.#outcomes) throw new RangeError('awaitOutcome needs the client option outcomes: true');
    const id = typeof request === 'string' ? request : request.requestId;
    return this.#outcomes.wait(id, options.timeoutMs);
  }

  /** Waits for requests in flight to be acknowledged, then disconnects. */
  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    await this.#starting?.catch(() => undefined);
    this.#state = 'closed';
    await this.#sender.idle();
    await this.#outcomes?.stop().catch(() => undefined);
    await this.#producer.disconnect();
  }

  async #send<N extends ScheduleCommandName>(
    command: N,
    envelope: RequestEnvelope,
    body: () => CommandRecords[N],
  ): Promise<SentRequest> {
    if (this.#state !== 'started') throw new Error(`client is ${this.#state}; call start() first`);
    const tenant = envelope.tenant ?? this.#o.tenant;
    if (tenant === undefined) throw new RangeError('tenant: give it on the request or as the client option');
    const requestId = envelope.requestId ?? uuidv7();
    const idempotencyKey = envelope.idempotencyKey ?? requestId;
    const record: ScheduleRequestRecord = {
      request_id: requestId,
      tenant,
      idempotency_key: idempotencyKey,
      command: commandBranch(command, body()),
    };
    const value = await this.#codec.encode(this.#topics.scheduleRequests, SCHEMAS.scheduleRequest, record);
    // Opened before the send: the answer may arrive before send() resolves.
    this.#outcomes?.expect(requestId);
    try {
      await this.#sender.send({
        key: idempotencyKey,
        value,
        headers: { ...envelope.headers, [HEADERS.requestId]: requestId, [HEADERS.tenant]: tenant },
      });
    } catch (err) {
      this.#outcomes?.cancel(requestId);
      throw err;
    }
    return { requestId, idempotencyKey, tenant, command };
  }
}
