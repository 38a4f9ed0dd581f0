import { Redis } from 'ioredis';
import { expect, test } from 'vitest';
import { isKairosError, type ErrorCode } from '@kairos/core';
import { HotSet, type HotJob, type PopOptions, type PoppedJob } from '@kairos/redis';
import { useNamespace } from '../support/namespace.js';
import { startRedisServer } from '../support/redis-server.js';

const P = 5;

/** The dispatch record: cancel and ack decode `resource_class`, `tenant_id` and `version` from it. */
const record = (jobId: string, version: number, resourceClass: string, tenant: string) =>
  JSON.stringify({ job_id: jobId, resource_class: resourceClass, tenant_id: tenant, version });

/** A hot-set job; class 'default', tenant 't1' and version 1 unless given. */
function job(
  jobId: string,
  dueAtMs: number,
  {
    version = 1,
    resourceClass = 'default',
    tenant = 't1',
  }: { version?: number; resourceClass?: string; tenant?: string } = {},
): HotJob {
  return {
    jobId,
    dueAtMs,
    version,
    resourceClass,
    tenant,
    record: record(jobId, version, resourceClass, tenant),
  };
}

/** Schedules every job (pipelined), expecting each to be added. */
async function scheduleAll(hot: HotSet, epoch: number, jobs: readonly HotJob[]): Promise<void> {
  const outcomes = await Promise.all(jobs.map((j) => hot.schedule(P, epoch, j)));
  expect(outcomes.filter((o) => o !== 'added')).toEqual([]);
}

/** Pops up to `limit` jobs of the class 'default'. */
const upTo = (limit: number, extra: Omit<PopOptions, 'classes'> = {}): PopOptions => ({
  classes: [{ name: 'default', limit }],
  ...extra,
});

const ids = (jobs: readonly PoppedJob[]) => jobs.map((j) => j.jobId);
const tenantOf = (j: PoppedJob) => (JSON.parse(j.record) as { tenant_id: string }).tenant_id;
const classOf = (j: PoppedJob) => (JSON.parse(j.record) as { resource_class: string }).resource_class;
const countBy = (jobs: readonly PoppedJob[], key: (j: PoppedJob) => string) => {
  const counts: Record<string, number> = {};
  for (const j of jobs) counts[key(j)] = (counts[key(j)] ?? 0) + 1;
  return counts;
};

/** Awaits a call that must fail with a KairosError of `code` (not a raw Redis error). */
async function expectKairos(call: Promise<unknown>, code: ErrorCode): Promise<void> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isKairosError(err), `expected a KairosError ${code}, got ${String(err)}`).toBe(true);
  expect(isKairosError(err) ? err.code : undefined).toBe(code);
}

/** Every key matching `pattern`, by SCAN (ioredis does not prefix a MATCH pattern). */
async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    keys.push(...batch);
  } while (cursor !== '0');
  return keys.sort();
}

test('fairness: one tenant’s 2,000-job backlog delays another tenant’s later job by at most one quantum', async () => {
  const ns = await useNamespace('hot-fair');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  await hot.setEpoch(P, 1);
  const now = await hot.serverTimeMs();
  // A: 2,000 jobs, all due before B's single job.
  const backlog = Array.from({ length: 2000 }, (_, i) =>
    job(`a${i}`, now - 100_000 + i * 10, { tenant: 'A' }),
  );
  await scheduleAll(hot, 1, backlog);
  await scheduleAll(hot, 1, [job('b0', now - 1000, { tenant: 'B' })]);
  expect(await hot.stats(P)).toEqual({ jobs: 2001, inflight: 0, oldestDueMs: now - 100_000 });

  const { jobs } = await hot.popDue(P, 1, upTo(100, { quantum: 16 }));
  expect(jobs).toHaveLength(100);
  expect(countBy(jobs, tenantOf)).toEqual({ A: 99, B: 1 });
  // Pass 1 serves A's oldest 16, then B; later passes serve A again, still oldest first.
  expect(ids(jobs).indexOf('b0')).toBe(16);
  expect(ids(jobs).filter((id) => id !== 'b0')).toEqual(backlog.slice(0, 99).map((j) => j.jobId));
  expect(await hot.size(P)).toEqual({ due: 1901, inflight: 100 });
  // A's remaining backlog is untouched by B, and its oldest job is next.
  expect((await hot.stats(P)).oldestDueMs).toBe(backlog[99]!.dueAtMs);
  await redis.quit();
});

test('weights: with A weighing 3 and B 1, both backlogged, A gets 3x B’s share (± one quantum)', async () => {
  const ns = await useNamespace('hot-weights');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  await hot.setEpoch(P, 1);
  const now = await hot.serverTimeMs();
  // Interleaved due times: neither tenant is strictly older.
  await scheduleAll(hot, 1, [
    ...Array.from({ length: 300 }, (_, i) => job(`a${i}`, now - 60_000 + 2 * i, { tenant: 'A' })),
    ...Array.from({ length: 300 }, (_, i) => job(`b${i}`, now - 60_000 + 2 * i + 1, { tenant: 'B' })),
  ]);
  const weights = new Map([
    ['A', 3],
    ['B', 1],
  ]);
  for (const quantum of [16, 4]) {
    const { jobs } = await hot.popDue(P, 1, upTo(64, { quantum, weights }));
    expect(jobs).toHaveLength(64);
    const { A = 0, B = 0 } = countBy(jobs, tenantOf);
    expect(A + B).toBe(64);
    expect(Math.abs(A - 3 * B), `quantum ${quantum}: A ${A}, B ${B}`).toBeLessThanOrEqual(quantum);
  }
  // Unweighted, the same backlog splits evenly.
  const even = countBy((await hot.popDue(P, 1, upTo(64, { quantum: 16 }))).jobs, tenantOf);
  expect(even).toEqual({ A: 32, B: 32 });
  await redis.quit();
});

test('class isolation: a critical job does not wait behind a default backlog, even when default may release nothing', async () => {
  const ns = await useNamespace('hot-classes');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  await hot.setEpoch(P, 1);
  const now = await hot.serverTimeMs();
  // 1,000 default jobs, all due before the critical ones; same tenant in both classes.
  await scheduleAll(
    hot,
    1,
    Array.from({ length: 1000 }, (_, i) => job(`d${i}`, now - 100_000 + i * 10)),
  );
  await scheduleAll(hot, 1, [job('c1', now - 10, { resourceClass: 'critical' })]);

  const both = await hot.popDue(P, 1, {
    classes: [
      { name: 'critical', limit: 500 },
      { name: 'default', limit: 500 },
    ],
  });
  expect(both.jobs[0]).toEqual({ jobId: 'c1', record: record('c1', 1, 'critical', 't1') });
  expect(countBy(both.jobs, classOf)).toEqual({ critical: 1, default: 500 });

  // Default is rate-limited to zero: critical still comes out, default keeps its backlog.
  await scheduleAll(hot, 1, [job('c2', now - 5, { resourceClass: 'critical' })]);
  const criticalOnly = await hot.popDue(P, 1, {
    classes: [
      { name: 'critical', limit: 500 },
      { name: 'default', limit: 0 },
    ],
  });
  expect(ids(criticalOnly.jobs)).toEqual(['c2']);
  expect(await hot.size(P)).toEqual({ due: 500, inflight: 502 });

  // Even listed after default, critical has its own limit: default's 500 do not use it up.
  await scheduleAll(hot, 1, [job('c3', now - 1, { resourceClass: 'critical' })]);
  const defaultFirst = await hot.popDue(P, 1, {
    classes: [
      { name: 'default', limit: 500 },
      { name: 'critical', limit: 1 },
    ],
  });
  expect(countBy(defaultFirst.jobs, classOf)).toEqual({ critical: 1, default: 500 });
  expect(defaultFirst.jobs.at(-1)?.jobId).toBe('c3');
  // A class nobody asks for releases nothing.
  await scheduleAll(hot, 1, [job('c4', now - 1, { resourceClass: 'critical' })]);
  expect((await hot.popDue(P, 1, upTo(10))).jobs).toEqual([]);
  expect(await hot.size(P)).toEqual({ due: 1, inflight: 1003 });
  await redis.quit();
});

test('lookahead window: deferred jobs stay out; hydrate re-adds a deferred version, events do not; a reschedule out of the window removes the old entry', async () => {
  const ns = await useNamespace('hot-window');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  const k = hot.keys(P);
  await hot.setEpoch(P, 1);
  const now = await hot.serverTimeMs();
  const hour = 3600_000;
  const v1 = job('x', now + 2 * hour);
  const empty = { jobs: 0, inflight: 0, oldestDueMs: undefined };

  // Due in 2 h, window 60 s: deferred, not stored.
  expect(await hot.schedule(P, 1, v1, { windowMs: 60_000 })).toBe('deferred');
  expect(await hot.stats(P)).toEqual(empty);
  expect(await redis.exists(k.queue('default', 't1'), k.ready('default'), k.jobs)).toBe(0);
  // A redelivered event of that version: already seen.
  expect(await hot.schedule(P, 1, v1, { windowMs: 60_000 })).toBe('ignored');
  // Hydration with the same window still defers it.
  expect(await hot.schedule(P, 1, v1, { windowMs: 60_000, mode: 'hydrate' })).toBe('deferred');
  expect(await hot.stats(P)).toEqual(empty);

  // Hydration once the window covers it: added.
  expect(await hot.schedule(P, 1, v1, { windowMs: 3 * hour, mode: 'hydrate' })).toBe('added');
  expect(await hot.stats(P)).toEqual({ jobs: 1, inflight: 0, oldestDueMs: v1.dueAtMs });
  // Present now: neither an event nor another hydration adds it twice.
  expect(await hot.schedule(P, 1, v1, { windowMs: 3 * hour, mode: 'event' })).toBe('ignored');
  expect(await hot.schedule(P, 1, v1, { windowMs: 3 * hour, mode: 'hydrate' })).toBe('ignored');
  expect(await hot.stats(P)).toEqual({ jobs: 1, inflight: 0, oldestDueMs: v1.dueAtMs });

  // Rescheduled (v2) to beyond the window: deferred, and the v1 entry is gone with its queue and index.
  const v2 = job('x', now + 3 * hour, { version: 2 });
  expect(await hot.schedule(P, 1, v2, { windowMs: 60_000 })).toBe('deferred');
  expect(await hot.stats(P)).toEqual(empty);
  expect(await redis.exists(k.queue('default', 't1'), k.ready('default'), k.jobs)).toBe(0);
  expect(await hot.popDue(P, 1, upTo(10, { leadMs: 4 * hour })).then((r) => r.jobs)).toEqual([]);
  // v1 can no longer come back, not even by hydration; v2 can.
  expect(await hot.schedule(P, 1, v1, { windowMs: 4 * hour, mode: 'hydrate' })).toBe('ignored');
  expect(await hot.schedule(P, 1, v2, { windowMs: 4 * hour, mode: 'hydrate' })).toBe('added');
  expect(await hot.stats(P)).toEqual({ jobs: 1, inflight: 0, oldestDueMs: v2.dueAtMs });

  // A hydration of a version in flight is ignored (it would be dispatched twice).
  const due = job('y', now - 1000);
  expect(await hot.schedule(P, 1, due, { windowMs: 60_000 })).toBe('added');
  expect(ids((await hot.popDue(P, 1, upTo(10))).jobs)).toEqual(['y']);
  expect(await hot.schedule(P, 1, due, { windowMs: 60_000, mode: 'hydrate' })).toBe('ignored');
  expect(await hot.size(P)).toEqual({ due: 1, inflight: 1 });
  await redis.quit();
});

test('trim drops only entries due beyond the window (in bounded steps); only a hydration re-adds them', async () => {
  const ns = await useNamespace('hot-trim');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  const k = hot.keys(P);
  await hot.setEpoch(P, 1);
  const now = await hot.serverTimeMs();
  const hour = 3600_000;
  const inflight = job('inflight', now - 5000);
  const dueNow = job('due', now - 1000, { resourceClass: 'critical' });
  const near = job('near', now + 60_000);
  const far = [
    job('far1', now + 2 * hour),
    job('far2', now + 3 * hour, { tenant: 't2' }),
    job('far3', now + 2 * hour, { resourceClass: 'critical' }),
    job('far4', now + 4 * hour, { resourceClass: 'critical', tenant: 't2' }),
    job('far5', now + 5 * hour, { resourceClass: 'critical', tenant: 't2' }),
  ];
  await scheduleAll(hot, 1, [inflight, dueNow, near, ...far]);
  expect(ids((await hot.popDue(P, 1, upTo(1))).jobs)).toEqual(['inflight']);
  expect(await hot.stats(P)).toEqual({ jobs: 8, inflight: 1, oldestDueMs: dueNow.dueAtMs });

  // 1 h window, at most 2 entries per script call: the 5 far entries go, in 3 calls.
  expect(await hot.trim(P, 1, hour, 2)).toBe(5);
  expect(await hot.stats(P)).toEqual({ jobs: 3, inflight: 1, oldestDueMs: dueNow.dueAtMs });
  // t2 has nothing left in either class: its queues and index entries are gone.
  expect(await redis.exists(k.queue('default', 't2'), k.queue('critical', 't2'))).toBe(0);
  expect(await redis.zrange(k.ready('default'), 0, '-1')).toEqual(['t1']);
  expect(await redis.zrange(k.ready('critical'), 0, '-1')).toEqual(['t1']);
  // Nothing left to trim.
  expect(await hot.trim(P, 1, hour)).toBe(0);

  // What stayed still releases normally; the in-flight entry was not touched.
  const popped = await hot.popDue(P, 1, {
    classes: [
      { name: 'critical', limit: 10 },
      { name: 'default', limit: 10 },
    ],
    leadMs: 120_000,
  });
  expect(ids(popped.jobs)).toEqual(['due', 'near']);

  // A replayed event of a trimmed version is ignored; a hydration (re-reading PostgreSQL) re-adds it,
  // unless the window still excludes it.
  expect(await hot.schedule(P, 1, far[0]!)).toBe('ignored');
  expect(await hot.schedule(P, 1, far[0]!, { mode: 'hydrate', windowMs: hour })).toBe('deferred');
  for (const j of far) expect(await hot.schedule(P, 1, j, { mode: 'hydrate' })).toBe('added');
  expect(await hot.stats(P)).toEqual({ jobs: 8, inflight: 3, oldestDueMs: now + 2 * hour });
  await redis.quit();
});

test('clear drops the whole hot set (waiting, in flight, every class and tenant) but keeps the epoch', async () => {
  const ns = await useNamespace('hot-clear');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  const k = hot.keys(P);
  await hot.setEpoch(P, 4);
  const now = await hot.serverTimeMs();
  const jobs = [
    job('a', now - 3000),
    job('b', now - 2000, { tenant: 't2' }),
    job('c', now - 1000, { resourceClass: 'critical' }),
    job('d', now + 60_000, { resourceClass: 'critical', tenant: 't3' }),
  ];
  await scheduleAll(hot, 4, jobs);
  expect(await hot.schedule(P, 4, job('deferred', now + 3600_000), { windowMs: 60_000 })).toBe('deferred');
  expect(ids((await hot.popDue(P, 4, upTo(1))).jobs)).toEqual(['a']);
  expect(await hot.size(P)).toEqual({ due: 3, inflight: 1 });

  expect(await hot.clear(P, 4)).toBe(4);
  expect(await hot.stats(P)).toEqual({ jobs: 0, inflight: 0, oldestDueMs: undefined });
  // Left: the epoch and the version markers (so replayed events stay ignored); nothing else.
  const left = (await scanKeys(redis, `${ns.prefix}*`)).map((key) => key.slice(ns.prefix.length));
  expect(left).toEqual([k.epoch, ...['a', 'b', 'c', 'd', 'deferred'].map((id) => k.version(id))].sort());
  expect(await hot.currentEpoch(P)).toBe(4);
  expect(await hot.clear(P, 4)).toBe(0);

  // The owner keeps working: nothing to pop or reclaim, replayed events ignored, hydration rebuilds.
  expect((await hot.popDue(P, 4, upTo(10))).jobs).toEqual([]);
  expect(await hot.schedule(P, 4, jobs[1]!)).toBe('ignored');
  for (const j of jobs) expect(await hot.schedule(P, 4, j, { mode: 'hydrate' })).toBe('added');
  expect(await hot.stats(P)).toEqual({ jobs: 4, inflight: 0, oldestDueMs: now - 3000 });
  await redis.quit();
});

test('pre-dispatch: a job due in 500 ms is released early with leadMs 1000, not with leadMs 0', async () => {
  const ns = await useNamespace('hot-lead');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  await hot.setEpoch(P, 1);
  const now = await hot.serverTimeMs();
  const soon = job('soon', now + 500);
  const later = job('later', now + 5000);
  await scheduleAll(hot, 1, [soon, later]);

  const onTime = await hot.popDue(P, 1, upTo(10, { leadMs: 0 }));
  expect(onTime.jobs).toEqual([]);
  expect(onTime.nowMs).toBeLessThan(soon.dueAtMs);

  const early = await hot.popDue(P, 1, upTo(10, { leadMs: 1000 }));
  expect(early.jobs).toEqual([{ jobId: 'soon', record: soon.record }]);
  // Released before its due time (by the Redis clock), but no more than the lead ahead.
  expect(early.nowMs).toBeLessThan(soon.dueAtMs);
  expect(early.nowMs + 1000).toBeGreaterThanOrEqual(soon.dueAtMs);
  expect(await hot.size(P)).toEqual({ due: 1, inflight: 1 });
  await redis.quit();
});

test('stats: oldestDueMs is the earliest waiting due time across classes and tenants', async () => {
  const ns = await useNamespace('hot-stats');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  await hot.setEpoch(P, 1);
  expect(await hot.stats(P)).toEqual({ jobs: 0, inflight: 0, oldestDueMs: undefined });
  const now = await hot.serverTimeMs();
  await scheduleAll(hot, 1, [
    job('x1', now + 5000, { resourceClass: 'batch', tenant: 'a' }),
    job('x2', now + 9000, { resourceClass: 'batch', tenant: 'a' }),
    job('y1', now - 3000, { resourceClass: 'gpu', tenant: 'b' }),
    job('z1', now + 1000, { resourceClass: 'batch', tenant: 'c' }),
    job('w1', now - 2000, { resourceClass: 'gpu', tenant: 'd' }),
  ]);
  expect(await hot.stats(P)).toEqual({ jobs: 5, inflight: 0, oldestDueMs: now - 3000 });

  // The oldest goes in flight: the next oldest waiting one counts, in-flight ones only in `inflight`.
  expect(ids((await hot.popDue(P, 1, { classes: [{ name: 'gpu', limit: 1 }] })).jobs)).toEqual(['y1']);
  expect(await hot.stats(P)).toEqual({ jobs: 5, inflight: 1, oldestDueMs: now - 2000 });
  expect(await hot.cancel(P, 1, 'w1', 2)).toBe(true);
  expect(await hot.stats(P)).toEqual({ jobs: 4, inflight: 1, oldestDueMs: now + 1000 });
  // Rescheduled earlier within its tenant's queue.
  expect(
    await hot.schedule(P, 1, job('x2', now - 7000, { version: 2, resourceClass: 'batch', tenant: 'a' })),
  ).toBe('added');
  expect(await hot.stats(P)).toEqual({ jobs: 4, inflight: 1, oldestDueMs: now - 7000 });
  expect(await hot.size(P)).toEqual({ due: 3, inflight: 1 });
  await redis.quit();
});

// --- A dedicated, tiny Redis for out-of-memory behaviour (the shared one's maxmemory is never touched).

/** The dedicated Redis's maxmemory: 2 MB. */
const TINY_MAXMEMORY = 2 * 1024 * 1024;

const isOomReply = (err: unknown) => err instanceof Error && /^OOM\b/.test(err.message);

/** Fills Redis with filler strings until it refuses a write; returns the filler keys. */
async function fillUntilRefused(redis: Redis): Promise<string[]> {
  const filler: string[] = [];
  for (const size of [16_384, 1024]) {
    for (let i = 0; ; i++) {
      if (i >= 10_000) throw new Error(`Redis never refused a ${size}-byte write`);
      const key = `filler:${filler.length}`;
      try {
        await redis.set(key, 'x'.repeat(size));
        filler.push(key);
      } catch (err) {
        if (isOomReply(err)) break;
        throw err;
      }
    }
  }
  return filler;
}

/** Everything the hot set holds under `pattern`, to show a refused call changed nothing. */
async function snapshot(redis: Redis, pattern: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const key of await scanKeys(redis, pattern)) {
    const type = await redis.type(key);
    if (type === 'string') out[key] = await redis.get(key);
    else if (type === 'hash') out[key] = await redis.hgetall(key);
    else if (type === 'zset') out[key] = await redis.zrange(key, 0, '-1', 'WITHSCORES');
    else if (type === 'set') out[key] = (await redis.smembers(key)).sort();
    else out[key] = type;
  }
  return out;
}

test('at maxmemory, schedule and popDue answer REDIS_OOM and change nothing; cancel, ack, trim and clear still work', async () => {
  const tiny = await startRedisServer(['--maxmemory', '2mb']);
  const redis = new Redis(tiny.url, { maxRetriesPerRequest: 1 });
  try {
    expect((await redis.config('GET', 'maxmemory'))[1]).toBe(String(TINY_MAXMEMORY));
    const hot = new HotSet(redis, { reclaimAfterMs: 3600_000 });
    const k = hot.keys(P);
    await hot.setEpoch(P, 1);
    const now = await hot.serverTimeMs();
    const hour = 3600_000;
    const w1 = job('w1', now - 3000);
    const w2 = job('w2', now - 2000, { tenant: 't2' });
    const c1 = job('c1', now - 1000);
    const f1 = job('f1', now - 5000);
    const late1 = job('late1', now + 2 * hour);
    const late2 = job('late2', now + 3 * hour, { resourceClass: 'critical', tenant: 't2' });
    await scheduleAll(hot, 1, [w1, w2, c1, f1, late1, late2]);
    expect(ids((await hot.popDue(P, 1, upTo(1))).jobs)).toEqual(['f1']);
    expect(await hot.stats(P)).toEqual({ jobs: 6, inflight: 1, oldestDueMs: w1.dueAtMs });

    const filler = await fillUntilRefused(redis);
    // Used memory drifts by a few KB between commands (Redis resizes client buffers on a timer):
    // lowering the limit by 256 KB keeps this Redis out of memory however it drifts.
    await redis.config('SET', 'maxmemory', String(TINY_MAXMEMORY - 256 * 1024));
    const probe = await redis.set('probe', 'x').then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isOomReply(probe), `a plain SET should be refused, got ${String(probe)}`).toBe(true);
    const before = await snapshot(redis, 'kairos:*');

    // Refused: a new job, a reschedule of a waiting job, a deferral (which would bump the version
    // marker and drop the entry), a hydration, and a pop (which must move jobs in flight).
    const refused: [string, () => Promise<unknown>][] = [
      ['schedule new', () => hot.schedule(P, 1, job('n1', now - 100))],
      ['schedule v2', () => hot.schedule(P, 1, job('w1', now - 50, { version: 2 }))],
      [
        'schedule deferred v2',
        () => hot.schedule(P, 1, job('w2', now + hour, { version: 2, tenant: 't2' }), { windowMs: 1000 }),
      ],
      ['hydrate', () => hot.schedule(P, 1, job('n2', now - 100), { mode: 'hydrate' })],
      ['popDue', () => hot.popDue(P, 1, upTo(100))],
      [
        'popDue critical first',
        () =>
          hot.popDue(P, 1, {
            classes: [
              { name: 'critical', limit: 5 },
              { name: 'default', limit: 5 },
            ],
            leadMs: 4 * hour,
          }),
      ],
    ];
    for (const [what, call] of refused) {
      await expectKairos(call(), 'REDIS_OOM').catch((err: unknown) => {
        throw new Error(`${what}: ${String(err)}`);
      });
      expect(await snapshot(redis, 'kairos:*'), what).toEqual(before);
    }
    expect(await redis.get(k.version('w1'))).toBe('1');
    expect(await hot.stats(P)).toEqual({ jobs: 6, inflight: 1, oldestDueMs: w1.dueAtMs });

    // Deletions work at maxmemory, and free memory.
    expect(await hot.cancel(P, 1, 'c1', 2)).toBe(true);
    // A cancel of a job the hot set does not hold still records its version.
    expect(await hot.cancel(P, 1, 'gone', 7)).toBe(true);
    expect(await redis.get(k.version('gone'))).toBe('7');
    expect(await hot.ack(P, 1, [{ jobId: 'f1', version: 1 }])).toBe(1);
    expect(await hot.stats(P)).toEqual({ jobs: 4, inflight: 0, oldestDueMs: w1.dueAtMs });
    expect(await hot.trim(P, 1, hour)).toBe(2);
    expect(await hot.stats(P)).toEqual({ jobs: 2, inflight: 0, oldestDueMs: w1.dueAtMs });
    expect(await hot.clear(P, 1)).toBe(2);
    expect(await hot.stats(P)).toEqual({ jobs: 0, inflight: 0, oldestDueMs: undefined });
    expect(await hot.currentEpoch(P)).toBe(1);

    // Still out of memory: freeing a few jobs does not make room by itself.
    await expectKairos(hot.schedule(P, 1, job('n1', now - 100)), 'REDIS_OOM');

    // Memory back: the refused writes had not recorded their versions, so the same events now apply.
    for (let i = 0; i < filler.length; i += 500) await redis.del(...filler.slice(i, i + 500));
    await redis.config('SET', 'maxmemory', String(TINY_MAXMEMORY));
    expect(await hot.schedule(P, 1, job('n1', now - 100))).toBe('added');
    expect(await hot.schedule(P, 1, job('w1', now - 50, { version: 2 }))).toBe('added');
    expect(await hot.schedule(P, 1, job('c1', now - 1000))).toBe('ignored');
    expect(ids((await hot.popDue(P, 1, upTo(10))).jobs)).toEqual(['n1', 'w1']);
    expect(await hot.size(P)).toEqual({ due: 0, inflight: 2 });
  } finally {
    await redis.quit().catch(() => redis.disconnect());
    await tiny.stop();
  }
});
