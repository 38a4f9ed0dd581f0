import type { ProcessDeployment } from '@kairos/ops';
import type { AckedJob } from './history.js';
import type { PlannedJob } from './load-plan.js';

/** What the generator was told: acknowledged creates, cancels and reschedules. */
interface Acked {
  id: string;
  dueMs: number;
  cancelAckMs?: number;
  /** A cancel was sent and not answered: it may have committed. */
  mayDrop?: boolean;
}

const TICK_MS = 250;
const BATCH = 500;

/**
 * Plays a load plan against the deployment's public API (whichever API process is up): creates
 * in batches (`POST /v1/jobs:batch`, idempotency keys, so a retry after an API death is safe),
 * then the planned cancels and reschedules. A request that fails (the API killed) is tried again
 * next tick; only what the API acknowledged is recorded for the checker.
 */
export class LoadRunner {
  readonly #d: ProcessDeployment;
  readonly #plan: PlannedJob[];
  readonly #startMs: number;
  readonly #acked = new Map<number, Acked>();
  readonly #actionsDone = new Set<number>();
  #next = 0;
  #stopped = false;
  #loop: Promise<void> | undefined;
  /** Requests that failed (connection refused, 5xx) and were retried. */
  failures = 0;

  constructor(d: ProcessDeployment, plan: readonly PlannedJob[], startMs: number) {
    this.#d = d;
    this.#plan = [...plan];
    this.#startMs = startMs;
  }

  start(): void {
    this.#loop = (async () => {
      while (!this.#stopped) {
        await this.#tick();
        await new Promise((r) => setTimeout(r, TICK_MS));
      }
    })();
  }

  /** Resolves once every planned job was submitted and every action tried (or `deadlineMs` passed). */
  async finish(deadlineMs: number): Promise<void> {
    while (Date.now() < deadlineMs && (this.#next < this.#plan.length || this.#pendingActions().length > 0))
      await new Promise((r) => setTimeout(r, TICK_MS));
    this.#stopped = true;
    await this.#loop;
  }

  /** The acknowledged jobs (ids, due times, cancels), for the history checker. */
  acked(): AckedJob[] {
    return [...this.#acked.values()].map((a) => ({
      id: a.id,
      dueMs: a.dueMs,
      ...(a.cancelAckMs !== undefined ? { cancelAckMs: a.cancelAckMs } : {}),
      ...(a.mayDrop === true ? { mayDrop: true } : {}),
    }));
  }

  async #tick(): Promise<void> {
    const now = Date.now() - this.#startMs;
    let end = this.#next;
    while (end < this.#plan.length && (this.#plan[end]?.submitMs ?? Infinity) <= now) end++;
    for (let from = this.#next; from < end; from += BATCH) {
      if (!(await this.#create(this.#plan.slice(from, Math.min(end, from + BATCH))))) return;
      this.#next = Math.min(end, from + BATCH);
    }
    for (const p of this.#pendingActions()) {
      if ((p.cancelMs ?? p.reschedule?.atMs ?? Infinity) > now) continue;
      if (await this.#act(p)) this.#actionsDone.add(p.n);
    }
  }

  /** Planned actions not done yet on acknowledged jobs whose due time has not come. */
  #pendingActions(): PlannedJob[] {
    const now = Date.now() - this.#startMs;
    return this.#plan.filter(
      (p) =>
        (p.cancelMs !== undefined || p.reschedule !== undefined) &&
        !this.#actionsDone.has(p.n) &&
        this.#acked.has(p.n) &&
        // Too close to its due time: the job may be dispatched already; give the action up.
        now < p.dueMs - 1500,
    );
  }

  async #request(method: string, path: string, body: unknown): Promise<Response | undefined> {
    try {
      const res = await fetch(`${this.#d.apiUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${this.#d.apiKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(10_000),
      });
      if (res.status >= 500) {
        this.failures++;
        await res.body?.cancel();
        return undefined;
      }
      return res;
    } catch {
      this.failures++;
      return undefined;
    }
  }

  async #create(batch: readonly PlannedJob[]): Promise<boolean> {
    const jobs = batch.map((p) => ({
      tenant: 'acme',
      type: p.type,
      resource_class: p.resourceClass,
      payload: { ms: p.workMs },
      due_at: new Date(this.#startMs + p.dueMs).toISOString(),
      idempotency_key: `chaos-${p.n}`,
      max_attempts: 20,
      retry: { base_ms: 200, cap_ms: 2000, jitter_ms: 200 },
    }));
    const res = await this.#request('POST', '/v1/jobs:batch', { jobs });
    if (!res) return false;
    const text = await res.text();
    if (res.status !== 201 && res.status !== 200) throw new Error(`batch refused ${res.status}: ${text}`);
    const created = (JSON.parse(text) as { jobs: { id: string }[] }).jobs;
    batch.forEach((p, i) => {
      const id = created[i]?.id;
      if (id) this.#acked.set(p.n, { id, dueMs: this.#startMs + p.dueMs });
    });
    return true;
  }

  async #act(p: PlannedJob): Promise<boolean> {
    const a = this.#acked.get(p.n);
    if (!a) return false;
    if (p.cancelMs !== undefined) {
      const res = await this.#request('DELETE', `/v1/jobs/${a.id}`, undefined);
      if (!res) {
        a.mayDrop = true; // it may have committed before the API died
        return false;
      }
      await res.body?.cancel();
      if (res.status === 200) a.cancelAckMs = Date.now();
      return true;
    }
    const to = this.#startMs + (p.reschedule?.toMs ?? 0);
    const res = await this.#request('POST', `/v1/jobs/${a.id}/reschedule`, {
      due_at: new Date(to).toISOString(),
    });
    if (!res) return false;
    await res.body?.cancel();
    if (res.status === 200) a.dueMs = to;
    return true;
  }
}
