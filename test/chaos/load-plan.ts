/**
 * The chaos suite's load, planned up front from a seed (pure): which jobs, of which class, due
 * when, submitted how far ahead, and which are later cancelled or rescheduled. The same seed and
 * sizes give the same plan, so a failing run can be repeated (KAIROS_CHAOS_SEED).
 */
import { seededRandom } from '@kairos/ops';

export interface PlannedJob {
  readonly n: number;
  readonly resourceClass: string;
  /** Its job type: every other job is the other worker service's (chaos-a, chaos-b). */
  readonly type: 'chaos.work' | 'chaos.mail';
  /** Due time after the load's start, ms. */
  readonly dueMs: number;
  /** Submission time after the load's start, ms (≤ dueMs). */
  readonly submitMs: number;
  /** How long the handler runs, ms. */
  readonly workMs: number;
  /** Cancel it at this time after the start (before its due time), ms. */
  readonly cancelMs?: number;
  /** Reschedule it at `at` to `toMs` (both after the start), ms. */
  readonly reschedule?: { readonly atMs: number; readonly toMs: number };
}

export interface PlanOptions {
  readonly seed: number;
  readonly jobs: number;
  /** Due times spread over [3 s, durationMs]. */
  readonly durationMs: number;
}

/** Classes by weight: critical 20 %, default 50 %, io 30 %. */
function pickClass(r: number): string {
  return r < 0.2 ? 'critical' : r < 0.7 ? 'default' : 'io';
}

export function planLoad(o: PlanOptions): PlannedJob[] {
  const rnd = seededRandom(o.seed);
  const jobs: PlannedJob[] = [];
  for (let n = 0; n < o.jobs; n++) {
    const dueMs = Math.round(3000 + rnd() * (o.durationMs - 3000));
    // A third due at once (submitted at their due time), the rest submitted 1-20 s ahead.
    const lead = rnd() < 0.33 ? 0 : Math.round(1000 + rnd() * 19_000);
    const submitMs = Math.max(0, dueMs - lead);
    // Mostly short handlers; one in ten long enough to be running when a worker dies.
    const workMs = rnd() < 0.1 ? Math.round(1000 + rnd() * 2000) : Math.round(10 + rnd() * 140);
    const type = n % 2 === 0 ? 'chaos.work' : 'chaos.mail';
    const job: PlannedJob = { n, resourceClass: pickClass(rnd()), type, dueMs, submitMs, workMs };
    const act = rnd();
    const room = dueMs - submitMs;
    // Actions land at least 2 s before the due time, so they meet a job still SCHEDULED.
    if (room >= 6000 && act < 0.05) jobs.push({ ...job, cancelMs: submitMs + Math.round(room * 0.5) });
    else if (room >= 6000 && act < 0.1) {
      const atMs = submitMs + Math.round(room * 0.5);
      jobs.push({ ...job, reschedule: { atMs, toMs: dueMs + Math.round(1000 + rnd() * 9000) } });
    } else jobs.push(job);
  }
  return jobs.sort((a, b) => a.submitMs - b.submitMs);
}
