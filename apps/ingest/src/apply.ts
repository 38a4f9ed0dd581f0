import type { CreateResult, JobCommands, ScheduleCommands } from '@kairos/commands';
import { isKairosError, isTransient, KairosError } from '@kairos/core';
import type { Pool } from '@kairos/db';
import type { Logger } from '@kairos/observability';
import type { ScheduleRequestRecord } from '@kairos/schemas';
import type { AppliedTo } from './outcomes.js';
import type { IngestCommand } from './request-commands.js';
import { commandRejection, fieldsRejection, type Rejection } from './rejections.js';
import { isScheduleCommand } from './schedule-request-commands.js';

/** What became of one request. */
export type Applied =
  ({ readonly kind: 'accepted' } & AppliedTo) | { readonly kind: 'rejected'; readonly rejection: Rejection };

/** A decoded, mapped request of a batch; `result` is set once it is decided, and never again. */
export interface Pending {
  readonly request: ScheduleRequestRecord;
  readonly command: IngestCommand;
  readonly traceparent: string | null;
  result?: Applied;
  /** Unexpected errors met while PostgreSQL answered (a poison request is rejected after a few). */
  failures: number;
}

export interface ApplierOptions {
  readonly commands: JobCommands;
  /** The schedule command handlers (the HTTP API's /v1/schedules). */
  readonly schedules: ScheduleCommands;
  /** Probed when a command fails unexpectedly: is PostgreSQL up (the request's fault) or not? */
  readonly pool: Pool;
  /** Most creates in one transaction. */
  readonly maxCreatesPerTransaction: number;
  /** Unexpected failures of one request, PostgreSQL being up, before it is rejected as INTERNAL_ERROR. */
  readonly internalErrorAttempts: number;
  readonly log: Logger;
}

/**
 * Applies a batch's requests through the shared command handlers, in offset order. Consecutive
 * creates of jobs share transactions (each up to maxCreatesPerTransaction); any other command is
 * its own. A transient failure (PostgreSQL down) is thrown to the caller, which retries: decided
 * requests keep their results, so a retry resumes at the first undecided one and never answers a
 * request twice. An error that is the request's fault becomes its rejection; an unexpected one
 * while PostgreSQL answers is retried a few times, then rejected as INTERNAL_ERROR, so a poison
 * request can never hold its partition forever.
 */
export class RequestApplier {
  readonly #o: ApplierOptions;

  constructor(options: ApplierOptions) {
    this.#o = options;
  }

  /** `between` runs after each transaction (the consumer's heartbeat: a batch may take a while). */
  async apply(
    batch: readonly Pending[],
    between: () => Promise<void> = () => Promise.resolve(),
  ): Promise<void> {
    for (const p of batch) if (!p.result) this.#screen(p);
    for (let i = 0; i < batch.length;) {
      const p = batch[i];
      if (!p || p.result) {
        i++;
        continue;
      }
      if (p.command.name !== 'CreateJob') {
        await this.#one(p);
        await between();
        i++;
        continue;
      }
      // The run of consecutive undecided creates from here (decided ones in between are skipped).
      const run: Pending[] = [];
      let j = i;
      for (; j < batch.length && run.length < this.#o.maxCreatesPerTransaction; j++) {
        const q = batch[j];
        if (!q) break;
        if (q.result) continue;
        if (q.command.name !== 'CreateJob') break;
        run.push(q);
      }
      await this.#creates(run);
      await between();
      i = j;
    }
  }

  /** A create's fields are validated up front (no I/O), so one invalid create spoils no transaction. */
  #screen(p: Pending): void {
    if (p.command.name !== 'CreateJob') return;
    try {
      this.#o.commands.validate([p.command.body]);
    } catch (err) {
      if (!isKairosError(err, 'VALIDATION')) throw err;
      p.result = { kind: 'rejected', rejection: fieldsRejection(err.fields) };
    }
  }

  async #creates(run: readonly Pending[]): Promise<void> {
    let results: CreateResult[];
    try {
      results = await this.#o.commands.createJobs(
        run.map((p) => (p.command as { body: Record<string, unknown> }).body),
        // A transaction's events share one trace context: the requests', when they all carry the
        // same one; none otherwise, rather than a wrong one.
        { traceparent: sharedTraceparent(run) },
      );
    } catch (err) {
      if (isTransient(err)) throw err;
      // One request spoiled the run (a due time that crossed the limit since screening, or
      // something unexpected): decide each on its own.
      this.#o.log.warn({ err, requests: run.length }, 'a batch of creates failed; applying them one by one');
      for (const p of run) if (!p.result) await this.#one(p);
      return;
    }
    run.forEach((p, i) => {
      const r = results[i];
      if (r) p.result = { kind: 'accepted', job: r.job, schedule: null, duplicate: !r.created };
    });
  }

  async #one(p: Pending): Promise<void> {
    const { commands } = this.#o;
    const ctx = {
      traceparent: p.traceparent,
      tenantId: p.request.tenant,
      requestKey: p.request.idempotency_key,
    };
    const accepted = (applied: AppliedTo): Applied => ({ kind: 'accepted', ...applied });
    try {
      switch (p.command.name) {
        case 'CreateJob': {
          const r = await commands.createJob(p.command.body, { traceparent: p.traceparent });
          p.result = accepted({ job: r.job, schedule: null, duplicate: !r.created });
          return;
        }
        case 'CancelJob': {
          const r = await commands.cancel(p.command.jobId, ctx);
          p.result = accepted({ job: r.job, schedule: null, duplicate: !r.applied });
          return;
        }
        case 'RescheduleJob': {
          const r = await commands.reschedule(p.command.jobId, p.command.body, ctx);
          p.result = accepted({ job: r.job, schedule: null, duplicate: !r.applied });
          return;
        }
        case 'CreateSchedule': {
          // Its key is the schedule's own idempotency key (in the body), as over HTTP.
          const r = await this.#o.schedules.createSchedule(p.command.body, {
            tenantId: ctx.tenantId,
            traceparent: ctx.traceparent,
          });
          p.result = accepted({ job: null, schedule: r.schedule, duplicate: !r.created });
          return;
        }
        default: {
          const r = await this.#o.schedules.change(p.command.change, ctx);
          p.result = accepted({ job: r.job, schedule: r.schedule, duplicate: !r.applied });
          return;
        }
      }
    } catch (err) {
      const rejection = commandRejection(err, isScheduleCommand(p.command.name) ? 'schedule' : 'job');
      if (rejection) {
        p.result = { kind: 'rejected', rejection };
        return;
      }
      if (isTransient(err)) throw err;
      await this.#assertDatabaseUp(err);
      p.failures++;
      if (p.failures < this.#o.internalErrorAttempts) throw err;
      this.#o.log.error(
        {
          err,
          requestId: p.request.request_id,
          tenant: p.request.tenant,
          traceparent: p.traceparent ?? undefined,
        },
        'request keeps failing while PostgreSQL answers; rejected as INTERNAL_ERROR',
      );
      p.result = {
        kind: 'rejected',
        rejection: {
          reason: 'INTERNAL_ERROR',
          message: `failed ${p.failures} times: ${err instanceof Error ? err.message : String(err)}`,
          fields: [],
        },
      };
    }
  }

  /** An unexpected error is the request's only if PostgreSQL answers; otherwise it is an outage. */
  async #assertDatabaseUp(cause: unknown): Promise<void> {
    try {
      await this.#o.pool.query('SELECT 1');
    } catch (err) {
      throw new KairosError('DEPENDENCY_UNAVAILABLE', `PostgreSQL does not answer: ${String(err)}`, {
        cause: cause instanceof Error ? cause : err,
      });
    }
  }
}

function sharedTraceparent(run: readonly Pending[]): string | null {
  const first = run[0]?.traceparent ?? null;
  return run.every((p) => p.traceparent === first) ? first : null;
}
