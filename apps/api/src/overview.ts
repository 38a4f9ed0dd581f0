import {
  CANARY_TENANT,
  CANARY_TYPE,
  canaryStalled,
  canaryStalledAlert,
  mergeLagMinutes,
  slaAlert,
  type Alert,
} from '@kairos/core';
import {
  countLiveJobs,
  firstCanaries,
  latestCanarySuccesses,
  postgresOnlyPartitions,
  readLagMinutes,
  schedulesInBreach,
  type CanarySuccess,
  type Pool,
  type PostgresOnlyPartition,
} from '@kairos/db';
import type { OverviewView } from './api-schemas.js';

/** What the overview judges canaries by: the tracker's settings (KAIROS_CANARY_*). */
export interface CanarySettings {
  /** A canary per class this often, ms; 0: the canary is off. Default: 60,000. */
  readonly intervalMs: number;
  /** No canary of a class succeeding for this long is `canary_stalled`, ms. Default: 120,000. */
  readonly stallMs: number;
}

export interface OverviewSources {
  readonly pool: Pool;
  readonly resourceClasses: readonly string[];
  readonly canary: CanarySettings;
}

export interface OverviewRequest {
  /** One tenant, or undefined: every tenant (a key of every tenant without ?tenant=). */
  readonly tenant: string | undefined;
  /** A key of every tenant: it also sees canaries and PostgreSQL-only partitions. */
  readonly system: boolean;
  readonly minutes: number;
}

/** How far back canaries are looked at (the tracker keeps them this long), ms. */
const CANARY_LOOKBACK_MS = 3_600_000;

const iso = (d: Date | number) => new Date(d).toISOString();

/**
 * The overview in one go: a few index-served reads of PostgreSQL in parallel (live job counts,
 * the lag history of the last minutes, canaries, schedules in breach, PostgreSQL-only partitions),
 * alerts derived by the tracker's rules.
 */
export async function readOverview(s: OverviewSources, r: OverviewRequest): Promise<OverviewView> {
  const now = Date.now();
  const since = new Date(now - CANARY_LOOKBACK_MS);
  const canaryOn = r.system && s.canary.intervalMs > 0;
  const [jobs, lag, successes, firsts, breaches, pgOnly] = await Promise.all([
    countLiveJobs(s.pool, r.tenant),
    readLagMinutes(s.pool, r.minutes),
    canaryOn ? latestCanarySuccesses(s.pool, CANARY_TENANT, CANARY_TYPE, since) : [],
    canaryOn ? firstCanaries(s.pool, CANARY_TENANT, CANARY_TYPE, since) : new Map<string, Date>(),
    schedulesInBreach(s.pool, r.tenant),
    r.system ? postgresOnlyPartitions(s.pool) : [],
  ]);
  const canaries = canaryOn ? canaryViews(s, successes, firsts, now) : [];
  const alerts: OverviewView['alerts'] = [
    ...canaries.filter((c) => c.stalled).map((c) => c.alert),
    ...breaches.map((b) =>
      alertView(
        slaAlert(b.scheduleId, b.tenantId, b.slaMs, b.lateOccurrenceAt),
        // Late from the deadline of its newest late run at the latest.
        b.lateOccurrenceAt.getTime() + b.slaMs,
      ),
    ),
    ...pgOnly.map((p) => alertView(postgresOnlyAlert(p), p.since)),
  ];
  return {
    tenant: r.tenant ?? null,
    at: iso(now),
    jobs: jobs.map((j) => ({
      tenant: j.tenant,
      resource_class: j.resourceClass,
      state: j.state,
      count: j.jobs,
    })),
    dispatch_lag: lagViews(s.resourceClasses, mergeLagMinutes(lag)),
    canaries: canaries.map(({ alert: _alert, ...c }) => c),
    alerts,
    postgres_only: pgOnly.map((p) => ({ partition: p.partition, since: iso(p.since), owner: p.owner })),
  };
}

function alertView(a: Alert, since: Date | number): OverviewView['alerts'][number] {
  return {
    name: a.name as OverviewView['alerts'][number]['name'],
    labels: a.labels,
    since: iso(since),
    summary: a.summary,
  };
}

function postgresOnlyAlert(p: PostgresOnlyPartition): Alert {
  return {
    name: 'postgres_only',
    labels: { partition: String(p.partition) },
    summary: `partition ${p.partition} is dispatched from PostgreSQL alone (Redis refused writes at maxmemory) by ${p.owner}: nothing is lost, dispatch is slower`,
  };
}

/** Each configured class's canary, stalled by the tracker's rule (watching since its first canary kept). */
function canaryViews(
  s: OverviewSources,
  successes: readonly CanarySuccess[],
  firsts: ReadonlyMap<string, Date>,
  now: number,
): (OverviewView['canaries'][number] & { alert: OverviewView['alerts'][number] })[] {
  const last = new Map(successes.map((c) => [c.resourceClass, c]));
  return s.resourceClasses.map((rc) => {
    const success = last.get(rc);
    const lastMs = success?.finishedAt.getTime() ?? null;
    const watchingSince = firsts.get(rc)?.getTime() ?? now - CANARY_LOOKBACK_MS;
    const stalled = canaryStalled(lastMs, watchingSince, now, s.canary.stallMs);
    const stalledAt = Math.max(lastMs ?? -Infinity, watchingSince) + s.canary.stallMs;
    return {
      resource_class: rc,
      last_success_at: success ? iso(success.finishedAt) : null,
      latency_ms: success ? success.latencyMs : null,
      stalled,
      alert: alertView(canaryStalledAlert(rc, s.canary.stallMs), stalledAt),
    };
  });
}

/** Every configured class (and any other with history), each with its points in time order. */
function lagViews(
  classes: readonly string[],
  points: ReturnType<typeof mergeLagMinutes>,
): OverviewView['dispatch_lag'] {
  const by = new Map<string, OverviewView['dispatch_lag'][number]['points']>(classes.map((c) => [c, []]));
  for (const p of points) {
    let list = by.get(p.resourceClass);
    if (!list) by.set(p.resourceClass, (list = []));
    list.push({ at: iso(p.minuteMs), count: p.count, p50_ms: p.p50Ms, p99_ms: p.p99Ms, max_ms: p.maxMs });
  }
  return [...by].map(([resource_class, pts]) => ({ resource_class, points: pts }));
}
