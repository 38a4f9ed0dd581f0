/**
 * The chaos suite's history checker: pure functions over what a run recorded (the acknowledged
 * requests) and what the system wrote (PostgreSQL rows, task and result messages, effect rows,
 * canaries). No I/O here, so every rule is unit-tested (history.unit.test.ts).
 */

/** A job whose creation the API acknowledged, as the load generator saw it. */
export interface AckedJob {
  readonly id: string;
  /** Its due time as last acknowledged (an acknowledged reschedule's, else the creation's), ms. */
  readonly dueMs: number;
  /** When the API acknowledged its cancel (200), ms; the commit came before this. */
  readonly cancelAckMs?: number;
  /**
   * It may end CANCELLED or SKIPPED with no effect: a run of a recurring schedule (the schedule
   * deleted, a policy skipped it), or a job whose cancel was sent but never answered.
   */
  readonly mayDrop?: boolean;
}

/** A task message (kairos.tasks.<class>): one dispatch of one attempt. */
export interface Dispatch {
  readonly jobId: string;
  readonly fence: number;
  readonly dueMs: number;
  readonly dispatchedMs: number;
}

/** A STARTED result message (kairos.task-results): an attempt a worker began. */
export interface Start {
  readonly jobId: string;
  readonly fence: number;
  readonly dueMs: number;
  readonly startedMs: number;
}

/** A row of the effect table (the handler's side effect, through fencedEffect). */
export interface Effect {
  readonly jobId: string;
  readonly fence: number;
  readonly atMs: number;
}

/** A handler call, as the worker's process said it began (its START line), ms. */
export interface HandlerCall {
  readonly jobId: string;
  readonly fence: number;
  readonly atMs: number;
}

/** A canary job of the tracker's (tenant _kairos). */
export interface Canary {
  readonly resourceClass: string;
  readonly createdMs: number;
  readonly state: string;
  readonly finishedMs?: number;
}

/** A fault injected at `atMs`; its window lasts until the next one's. */
export interface FaultMark {
  readonly name: string;
  readonly atMs: number;
  /** For a delay-tier owner's death: the latest dispatch of its orphaned jobs after max(kill, due), ms. */
  readonly failoverMs?: number;
}

export interface History {
  readonly jobs: readonly AckedJob[];
  /** Final state of every job in PostgreSQL, by id (a missing id is a lost job). */
  readonly states: ReadonlyMap<string, string>;
  readonly dispatches: readonly Dispatch[];
  readonly starts: readonly Start[];
  readonly effects: readonly Effect[];
  readonly canaries: readonly Canary[];
  /** Every handler call the workers reported. */
  readonly calls: readonly HandlerCall[];
  /** When each terminal job finished (its finished_at, else its last change), ms. */
  readonly finishedMs: ReadonlyMap<string, number>;
  /**
   * Terminal jobs as first seen terminal (state, attempt, fence and attempt rows, one string),
   * and as they are at the end: a terminal job never changes.
   */
  readonly terminalFirst: ReadonlyMap<string, string>;
  readonly terminalLast: ReadonlyMap<string, string>;
  /** In time order; the first is the baseline (no fault) from the load's start. */
  readonly faults: readonly FaultMark[];
}

export interface Limits {
  /** A canary of every class succeeds within this after each fault, ms. Default: 120,000. */
  readonly canaryRecoveryMs?: number;
  /** A dead delay-tier owner's jobs are dispatched within this, ms. Default: 10,000. */
  readonly failoverMs?: number;
  /** A job whose effect came later than this after its due time is listed in `late`, ms. Default: 30,000. */
  readonly lateMs?: number;
}

/** One line of the closing table: the jobs due in a fault's window and what became of them. */
export interface FaultRow {
  readonly fault: string;
  readonly jobs: number;
  readonly lost: number;
  readonly early: number;
  /** Effects applied more than once (extra rows). */
  readonly duplicates: number;
  readonly effects: number;
  /** Jobs rightly ended without running: cancelled, or a schedule's run cancelled or skipped. */
  readonly dropped: number;
  /** Jobs dispatched after their cancel was acknowledged, or with an effect, or not CANCELLED. */
  readonly cancelBroken: number;
  /** Redeliveries: task messages beyond the first of an attempt (allowed, counted). */
  readonly redispatches: number;
  /** Handler calls that began after their job had finished. */
  readonly rerunsFinished: number;
  /** Terminal jobs whose state, attempt, fence or attempt rows changed after. */
  readonly terminalChanged: number;
  /** The latest effect after its due time in the window, ms. */
  readonly maxLagMs: number;
  /** Until a canary of every class created after the fault succeeded, ms (undefined: never). */
  readonly recoverMs: number | undefined;
  readonly failoverMs?: number;
}

interface JobVerdict {
  readonly lost: boolean;
  readonly dropped: boolean;
  readonly early: boolean;
  readonly duplicates: number;
  readonly effects: number;
  readonly cancelBroken: boolean;
  readonly redispatches: number;
  readonly lagMs: number;
  readonly rerunsFinished: number;
  readonly terminalChanged: boolean;
}

function groupBy<T>(items: readonly T[], key: (t: T) => string): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

interface Indexed {
  readonly dispatches: Map<string, Dispatch[]>;
  readonly starts: Map<string, Start[]>;
  readonly effects: Map<string, Effect[]>;
  readonly calls: Map<string, HandlerCall[]>;
  readonly finishedMs: ReadonlyMap<string, number>;
  readonly terminalFirst: ReadonlyMap<string, string>;
  readonly terminalLast: ReadonlyMap<string, string>;
}

/** Handler calls of a job that began after it finished (1 ms: PostgreSQL's microseconds). */
function rerunsOfFinished(id: string, ix: Indexed): number {
  const finished = ix.finishedMs.get(id);
  if (finished === undefined) return 0;
  return (ix.calls.get(id) ?? []).filter((c) => c.atMs > finished + 1).length;
}

/** Whether a job once seen terminal is not the same at the end. */
function changedSinceTerminal(id: string, ix: Indexed): boolean {
  const first = ix.terminalFirst.get(id);
  return first !== undefined && first !== ix.terminalLast.get(id);
}

/** What became of one acknowledged job. */
export function judgeJob(job: AckedJob, state: string | undefined, ix: Indexed): JobVerdict {
  const dispatches = ix.dispatches.get(job.id) ?? [];
  const effects = ix.effects.get(job.id) ?? [];
  const starts = ix.starts.get(job.id) ?? [];
  // 1 ms: PostgreSQL keeps microseconds, the messages milliseconds.
  const early =
    starts.some((s) => s.startedMs + 1 < s.dueMs || s.startedMs + 1 < job.dueMs) ||
    effects.some((e) => e.atMs + 1 < job.dueMs);
  const attempts = new Set(dispatches.map((d) => d.fence)).size;
  const base = {
    early,
    duplicates: Math.max(0, effects.length - 1),
    effects: effects.length,
    redispatches: dispatches.length - attempts,
    lagMs: effects.length > 0 ? Math.min(...effects.map((e) => e.atMs)) - job.dueMs : 0,
    rerunsFinished: rerunsOfFinished(job.id, ix),
    terminalChanged: changedSinceTerminal(job.id, ix),
  };
  if (job.cancelAckMs !== undefined) {
    const after = dispatches.some((d) => d.dispatchedMs > (job.cancelAckMs ?? 0));
    const broken = after || effects.length > 0 || state !== 'CANCELLED';
    return { ...base, lost: false, dropped: !broken, cancelBroken: broken };
  }
  const dropped =
    job.mayDrop === true && (state === 'CANCELLED' || state === 'SKIPPED') && effects.length === 0;
  const lost = !dropped && (state !== 'SUCCEEDED' || effects.length === 0);
  return { ...base, lost, dropped, cancelBroken: false };
}

/** Until a canary of every class created at or after `atMs` succeeded, ms (undefined: never). */
export function canaryRecovery(canaries: readonly Canary[], atMs: number): number | undefined {
  let worst = 0;
  for (const list of groupBy(canaries, (c) => c.resourceClass).values()) {
    const done = list
      .filter((c) => c.createdMs >= atMs && c.state === 'SUCCEEDED' && c.finishedMs !== undefined)
      .map((c) => (c.finishedMs ?? 0) - atMs);
    if (done.length === 0) return undefined;
    worst = Math.max(worst, Math.min(...done));
  }
  return worst;
}

/** The index of the fault window a due time falls in (the baseline's, 0, before the first). */
function windowOf(faults: readonly FaultMark[], dueMs: number): number {
  let i = 0;
  while (i + 1 < faults.length && (faults[i + 1]?.atMs ?? Infinity) <= dueMs) i++;
  return i;
}

function emptyRow(f: FaultMark, canaries: readonly Canary[], first: boolean): FaultRow {
  return {
    fault: f.name,
    jobs: 0,
    lost: 0,
    early: 0,
    duplicates: 0,
    effects: 0,
    dropped: 0,
    cancelBroken: 0,
    redispatches: 0,
    rerunsFinished: 0,
    terminalChanged: 0,
    maxLagMs: 0,
    recoverMs: first ? 0 : canaryRecovery(canaries, f.atMs),
    ...(f.failoverMs !== undefined ? { failoverMs: f.failoverMs } : {}),
  };
}

function addVerdict(row: FaultRow, v: JobVerdict): FaultRow {
  return {
    ...row,
    jobs: row.jobs + 1,
    lost: row.lost + (v.lost ? 1 : 0),
    early: row.early + (v.early ? 1 : 0),
    duplicates: row.duplicates + v.duplicates,
    effects: row.effects + v.effects,
    dropped: row.dropped + (v.dropped ? 1 : 0),
    cancelBroken: row.cancelBroken + (v.cancelBroken ? 1 : 0),
    redispatches: row.redispatches + v.redispatches,
    rerunsFinished: row.rerunsFinished + v.rerunsFinished,
    terminalChanged: row.terminalChanged + (v.terminalChanged ? 1 : 0),
    maxLagMs: Math.max(row.maxLagMs, v.lagMs),
  };
}

/** Judges every acknowledged job and every fault: the per-fault table and each broken rule. */
export function checkHistory(
  h: History,
  limits: Limits = {},
): { rows: FaultRow[]; violations: string[]; late: string[] } {
  const ix: Indexed = {
    dispatches: groupBy(h.dispatches, (d) => d.jobId),
    starts: groupBy(h.starts, (s) => s.jobId),
    effects: groupBy(h.effects, (e) => e.jobId),
    calls: groupBy(h.calls, (c) => c.jobId),
    finishedMs: h.finishedMs,
    terminalFirst: h.terminalFirst,
    terminalLast: h.terminalLast,
  };
  const rows = h.faults.map((f, i) => emptyRow(f, h.canaries, i === 0));
  const violations: string[] = [];
  const late: string[] = [];
  for (const job of h.jobs) {
    const state = h.states.get(job.id);
    const v = judgeJob(job, state, ix);
    const w = windowOf(h.faults, job.dueMs);
    rows[w] = addVerdict(rows[w] as FaultRow, v);
    const what = [
      v.lost ? `lost (state ${state ?? 'missing'}, ${v.effects} effects)` : '',
      v.early ? 'started before due' : '',
      v.duplicates > 0 ? `effect applied ${v.effects} times` : '',
      v.cancelBroken ? `cancel broken (state ${state ?? 'missing'}, ${v.effects} effects)` : '',
      v.rerunsFinished > 0 ? `handler ran ${v.rerunsFinished} times after the job finished` : '',
      v.terminalChanged
        ? `changed after it was terminal (${ix.terminalFirst.get(job.id)} -> ${ix.terminalLast.get(job.id) ?? 'missing'})`
        : '',
    ].filter(Boolean);
    if (what.length > 0) violations.push(`job ${job.id} [${h.faults[w]?.name}]: ${what.join(', ')}`);
    if (v.lagMs > (limits.lateMs ?? 30_000)) late.push(lateLine(job, v, ix, h.faults[w]));
  }
  const canaryLimit = limits.canaryRecoveryMs ?? 120_000;
  const failoverLimit = limits.failoverMs ?? 10_000;
  for (const r of rows.slice(1)) {
    if (r.recoverMs === undefined || r.recoverMs > canaryLimit)
      violations.push(
        `${r.fault}: canary not recovered within ${canaryLimit} ms (${r.recoverMs ?? 'never'})`,
      );
    if (r.failoverMs !== undefined && r.failoverMs > failoverLimit)
      violations.push(`${r.fault}: failover took ${r.failoverMs} ms (target ${failoverLimit})`);
  }
  return { rows, violations, late };
}

/** Where a late job's time went: its due time, dispatches and effect relative to its window's fault. */
function lateLine(job: AckedJob, v: JobVerdict, ix: Indexed, f: FaultMark | undefined): string {
  const rel = (ms: number) => `+${((ms - (f?.atMs ?? 0)) / 1000).toFixed(1)}s`;
  const sent = (ix.dispatches.get(job.id) ?? []).map((d) => `fence ${d.fence} at ${rel(d.dispatchedMs)}`);
  return (
    `job ${job.id} [${f?.name}]: due ${rel(job.dueMs)}, dispatched ${sent.join(', ') || 'never'}, ` +
    `effect ${(v.lagMs / 1000).toFixed(1)} s after due`
  );
}

const seconds = (ms: number | undefined) => (ms === undefined ? 'never' : (ms / 1000).toFixed(1));

/** The closing table, in Markdown. */
export function formatFaultTable(rows: readonly FaultRow[]): string {
  const head =
    '| fault | jobs | lost | early | duplicates | effects | cancelled | cancel broken | redispatches | reruns of finished | terminal changed | max lag s | recover s | failover s |';
  const lines = rows.map(
    (r) =>
      `| ${r.fault} | ${r.jobs} | ${r.lost} | ${r.early} | ${r.duplicates} | ${r.effects} | ${r.dropped} | ${r.cancelBroken} | ` +
      `${r.redispatches} | ${r.rerunsFinished} | ${r.terminalChanged} | ${seconds(r.maxLagMs)} | ${seconds(r.recoverMs)} | ${r.failoverMs === undefined ? '' : seconds(r.failoverMs)} |`,
  );
  return [head, `|${' --- |'.repeat(14)}`, ...lines].join('\n');
}

/** A job's placement and first dispatch, for the failover figure. */
export interface DispatchedJob {
  readonly shard: number;
  readonly dueMs: number;
  readonly firstDispatchMs: number | undefined;
}

/**
 * How long a dead delay-tier owner's partitions went without dispatch: over its jobs due from the
 * kill until `untilMs`, the latest first dispatch after max(kill, due), ms (0 when none is due).
 */
export function failoverMs(
  jobs: readonly DispatchedJob[],
  orphaned: ReadonlySet<number>,
  killMs: number,
  untilMs: number,
): number {
  let worst = 0;
  for (const j of jobs) {
    if (!orphaned.has(j.shard) || j.dueMs > untilMs || j.dueMs < killMs - 2000) continue;
    const at = j.firstDispatchMs ?? Infinity;
    worst = Math.max(worst, at - Math.max(killMs, j.dueMs));
  }
  return worst;
}
