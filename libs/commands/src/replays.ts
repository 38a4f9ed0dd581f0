import {
  KairosError,
  Lifecycle,
  TERMINAL_STATES,
  type Job,
  type JobSearch,
  type Service,
} from '@kairos/core';
import {
  appendReplayAudit,
  claimReplay,
  endReplay,
  findJobs,
  findReplay,
  inTransaction,
  insertReplay,
  listReplays,
  markReplayed,
  orphanReplays,
  previewReplay,
  releaseReplays,
  replayAudit,
  takeReplayItems,
  type AuditEntry,
  type Pool,
  type Replay,
  type ReplayPreview,
} from '@kairos/db';
import { isUuid, newId } from './ids.js';
import type { JobCommands } from './job-commands.js';

export interface ReplaysOptions {
  readonly pool: Pool;
  readonly jobs: JobCommands;
  /** This runner's name, recorded as a replay's owner while it runs it. */
  readonly instanceId: string;
  /** A running replay whose runner has not beaten for this long is taken over. Default: 15,000 ms. */
  readonly staleMs?: number;
  /** Most dead letters one replay selects. Default: 100,000. */
  readonly maxJobs?: number;
  /** Reports a replay loop's unexpected failure (it is retried by the orphan sweep). */
  readonly onError?: (err: unknown, replayId: string) => void;
}

/** Most dead letters replayed in one transaction. */
const MAX_BATCH = 500;

const notFound = (id: string) => new KairosError('NOT_FOUND', `no replay ${id}`);

/**
 * Replays of dead letters, and re-runs of finished jobs. A replay freezes its selection when it
 * is created, then a runner sends each selected job back through the normal path as a new job
 * (PostgreSQL row + outbox, then the delay tier) at the replay's rate, marking each item in the
 * transaction that creates its job: each is replayed once, whatever crashes or is retried. A
 * runner heartbeats; another takes over a replay whose runner went quiet (the orphan sweep, every
 * staleMs). Every creation, resumption, cancellation and end is appended to replay_audit.
 */
export class Replays implements Service {
  readonly #o: ReplaysOptions;
  readonly #life: Lifecycle;
  readonly #running = new Map<string, Promise<void>>();
  #sweep: NodeJS.Timeout | undefined;
  #stopping = false;
  readonly #wakers = new Set<() => void>();

  constructor(options: ReplaysOptions) {
    this.#o = options;
    this.#life = new Lifecycle('replays', {
      start: () => {
        this.#sweep = setInterval(() => void this.#adoptOrphans(), this.#staleMs);
        void this.#adoptOrphans();
      },
      stop: () => this.#shutdown(),
    });
  }

  get state() {
    return this.#life.state;
  }

  start(): Promise<void> {
    return this.#life.start();
  }

  stop(): Promise<void> {
    return this.#life.stop();
  }

  get #staleMs(): number {
    return this.#o.staleMs ?? 15_000;
  }

  /** A dry run: what a replay of this search would send, changing nothing. */
  preview(search: JobSearch): Promise<ReplayPreview> {
    return previewReplay(this.#o.pool, search, this.#o.maxJobs ?? 100_000);
  }

  /** Creates a replay of the search's dead letters and starts running it here. */
  async create(search: JobSearch, filter: object, ratePerSec: number, actor: string): Promise<Replay> {
    const id = newId();
    const replay = await inTransaction(this.#o.pool, async (tx) => {
      const r = await insertReplay(
        tx,
        { id, tenant: search.tenant, filter, ratePerSec, createdBy: actor },
        search,
        this.#o.maxJobs ?? 100_000,
      );
      await appendReplayAudit(tx, id, 'created', actor, {
        filter,
        rate_per_sec: ratePerSec,
        selected: r.selected,
      });
      return r;
    });
    this.#launch(id);
    return replay;
  }

  /** The replay and its audit trail; another tenant's is NOT_FOUND. */
  async get(id: string, tenant: string | undefined): Promise<{ replay: Replay; audit: AuditEntry[] }> {
    const replay = await this.#own(id, tenant);
    return { replay, audit: await replayAudit(this.#o.pool, id) };
  }

  list(tenant: string | undefined, limit = 100): Promise<Replay[]> {
    return listReplays(this.#o.pool, tenant, limit);
  }

  /** Stops a running replay: what was replayed stays, the rest is not sent. CONFLICT once ended. */
  async cancel(id: string, tenant: string | undefined, actor: string): Promise<Replay> {
    await this.#own(id, tenant);
    return inTransaction(this.#o.pool, async (tx) => {
      const ended = await endReplay(tx, id, 'CANCELLED');
      if (!ended) throw new KairosError('CONFLICT', `replay ${id} has ended already`);
      await appendReplayAudit(tx, id, 'cancelled', actor, {
        selected: ended.selected,
        replayed: ended.replayed,
      });
      return ended;
    });
  }

  /** Runs a finished job again as a new job (replay_of the original); CONFLICT while it is live. */
  async rerun(jobId: string, tenant: string | undefined): Promise<Job> {
    const original = await this.#o.jobs.getJob(jobId, tenant === undefined ? {} : { tenantId: tenant });
    if (!TERMINAL_STATES.has(original.state)) {
      throw new KairosError(
        'CONFLICT',
        `job ${jobId} is ${original.state}; only a finished job can be run again`,
      );
    }
    const [copy] = await inTransaction(this.#o.pool, (tx) => this.#o.jobs.copyJobs(tx, [original]));
    if (!copy) throw new Error(`re-run of ${jobId} created no job`);
    return copy;
  }

  async #own(id: string, tenant: string | undefined): Promise<Replay> {
    if (!isUuid(id)) throw notFound(id);
    const r = await findReplay(this.#o.pool, id);
    if (!r || (tenant !== undefined && r.tenant !== tenant)) throw notFound(id);
    return r;
  }

  #launch(id: string): void {
    if (this.#stopping || this.#running.has(id)) return;
    const run = this.#run(id)
      .catch((err: unknown) => this.#o.onError?.(err, id))
      .finally(() => this.#running.delete(id));
    this.#running.set(id, run);
  }

  async #adoptOrphans(): Promise<void> {
    try {
      for (const id of await orphanReplays(this.#o.pool, this.#staleMs)) this.#launch(id);
    } catch (err) {
      this.#o.onError?.(err, '(sweep)');
    }
  }

  /** Sends a replay's items at its rate until none is left, it is cancelled, or this runner stops. */
  async #run(id: string): Promise<void> {
    const { pool, instanceId } = this.#o;
    const claimed = await claimReplay(pool, id, instanceId, this.#staleMs);
    if (!claimed) return;
    if (claimed.replayed > 0) {
      await appendReplayAudit(pool, id, 'resumed', instanceId, {
        replayed: claimed.replayed,
        selected: claimed.selected,
      });
    }
    const started = Date.now();
    let sent = 0;
    while (!this.#stopping) {
      // Item k of this run goes no sooner than (k + 1) / rate after the start: the rate holds from the first.
      const due = Math.floor(((Date.now() - started) * claimed.ratePerSec) / 1000) - sent;
      if (due <= 0) {
        await this.#sleep(Math.max(20, ((sent + 1) * 1000) / claimed.ratePerSec - (Date.now() - started)));
        continue;
      }
      const n = await this.#batch(id, Math.min(due, MAX_BATCH));
      if (n === 0) break;
      sent += n;
    }
    if (this.#stopping) return;
    await inTransaction(pool, async (tx) => {
      // Still ours (another runner may have taken it over), and nothing left: done.
      if (!(await claimReplay(tx, id, instanceId, this.#staleMs))) return;
      const left = await takeReplayItems(tx, id, instanceId, 1);
      if (left.length > 0) return;
      const ended = await endReplay(tx, id, 'DONE');
      if (ended) {
        await appendReplayAudit(tx, id, 'done', instanceId, {
          selected: ended.selected,
          replayed: ended.replayed,
        });
      }
    });
  }

  /** One transaction: up to n items become new jobs and are marked. 0: nothing left (or not ours). */
  async #batch(id: string, n: number): Promise<number> {
    return inTransaction(this.#o.pool, async (tx) => {
      const ids = await takeReplayItems(tx, id, this.#o.instanceId, n);
      if (ids.length === 0) return 0;
      const originals = await findJobs(tx, ids);
      const copies = await this.#o.jobs.copyJobs(tx, originals);
      const byOriginal = new Map(copies.map((c) => [c.replayOf, c.id]));
      await markReplayed(
        tx,
        id,
        ids.map((jobId) => ({ jobId, newJobId: byOriginal.get(jobId) ?? null })),
      );
      return ids.length;
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(t);
        this.#wakers.delete(wake);
        resolve();
      };
      const t = setTimeout(wake, ms);
      this.#wakers.add(wake);
    });
  }

  async #shutdown(): Promise<void> {
    this.#stopping = true;
    clearInterval(this.#sweep);
    for (const wake of [...this.#wakers]) wake();
    await Promise.allSettled([...this.#running.values()]);
    // Hand what this runner held to the next one at once instead of after staleMs.
    await releaseReplays(this.#o.pool, this.#o.instanceId).catch(() => undefined);
  }
}
