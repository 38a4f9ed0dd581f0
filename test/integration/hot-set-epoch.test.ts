import { expect, test } from 'vitest';
import { isKairosError } from '@kairos/core';
import { HotSet, Leases, type HotJob, type PopOptions } from '@kairos/redis';
import { useNamespace } from '../support/namespace.js';

const P = 3;

/** The dispatch record: cancel and ack decode `resource_class`, `tenant_id` and `version` from it. */
const record = (jobId: string, version = 1, resourceClass = 'default', tenant = 't1') =>
  JSON.stringify({ job_id: jobId, resource_class: resourceClass, tenant_id: tenant, version });

/** A hot-set job of class 'default' and tenant 't1'. */
const job = (jobId: string, dueAtMs: number, version = 1): HotJob => ({
  jobId,
  dueAtMs,
  version,
  resourceClass: 'default',
  tenant: 't1',
  record: record(jobId, version),
});

/** Pops up to `limit` jobs of the class 'default'. */
const upTo = (limit: number): PopOptions => ({ classes: [{ name: 'default', limit }] });

/** Awaits a call that must fail with STALE_EPOCH (a KairosError, not a raw Redis error). */
async function expectStale(call: Promise<unknown>): Promise<void> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isKairosError(err), `expected a KairosError, got ${String(err)}`).toBe(true);
  expect(isKairosError(err, 'STALE_EPOCH') ? err.code : undefined).toBe('STALE_EPOCH');
}

/** Bounded poll: calls `step` every 20 ms until it returns a value, or fails after `timeoutMs`. */
async function pollFor<T>(what: string, step: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await step();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a stale epoch owner gets STALE_EPOCH from schedule, cancel, popDue, ack, trim and clear, and changes nothing', async () => {
  const ns = await useNamespace('hot-set-epoch');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  const now = await hot.serverTimeMs();

  // No epoch recorded yet: nobody owns the partition, so nobody may write.
  await expectStale(hot.schedule(P, 1, job('j0', now - 1000)));
  await expectStale(hot.schedule(P, 1, job('j0', now - 1000), { mode: 'hydrate' }));
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 0 });

  await hot.setEpoch(P, 1);
  expect(await hot.schedule(P, 1, job('a', now - 1000))).toBe('added');
  expect(await hot.schedule(P, 1, job('b', now - 900))).toBe('added');
  // Due in two hours: trimmed below by the new owner's 1 h window, never by the stale one's.
  expect(await hot.schedule(P, 1, job('late', now + 2 * 3600_000))).toBe('added');
  expect(await hot.size(P)).toEqual({ due: 3, inflight: 0 });

  // A new owner takes over.
  expect(await hot.setEpoch(P, 2)).toBe(true);
  // An older epoch can never be written back.
  expect(await hot.setEpoch(P, 1)).toBe(false);
  expect(await hot.currentEpoch(P)).toBe(2);
  await expectStale(hot.schedule(P, 1, job('c', now - 1000)));
  await expectStale(hot.cancel(P, 1, 'a', 2));
  await expectStale(hot.popDue(P, 1, upTo(10)));
  await expectStale(hot.trim(P, 1, 3600_000));
  await expectStale(hot.clear(P, 1));
  expect(await hot.size(P)).toEqual({ due: 3, inflight: 0 });

  // The new owner sees the state the old one left: 'a' still scheduled (not cancelled), no 'c'.
  const popped = await hot.popDue(P, 2, upTo(1));
  expect(popped.jobs).toEqual([{ jobId: 'a', record: record('a') }]);
  expect(await hot.size(P)).toEqual({ due: 2, inflight: 1 });

  // The old owner can neither acknowledge the new owner's dispatch nor pop the remaining job.
  await expectStale(hot.ack(P, 1, [{ jobId: 'a', version: 1 }]));
  await expectStale(hot.popDue(P, 1, upTo(10)));
  expect(await hot.size(P)).toEqual({ due: 2, inflight: 1 });

  // An epoch that was never recorded (ahead of the stored one) is not the owner either.
  await expectStale(hot.popDue(P, 3, upTo(10)));
  await expectStale(hot.clear(P, 3));

  expect(await hot.ack(P, 2, [{ jobId: 'a', version: 1 }])).toBe(1);
  expect(await hot.size(P)).toEqual({ due: 2, inflight: 0 });
  expect(await hot.trim(P, 2, 3600_000)).toBe(1);
  expect(await hot.size(P)).toEqual({ due: 1, inflight: 0 });
  expect(await hot.clear(P, 2)).toBe(1);
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 0 });
  expect(await hot.currentEpoch(P)).toBe(2);
  await redis.quit();
});

test('a job pops only once due by Redis TIME: 1 s past pops, 60 s ahead does not, never early', async () => {
  const ns = await useNamespace('hot-set-due');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  await hot.setEpoch(P, 1);
  const now = await hot.serverTimeMs();
  const past = job('past', now - 1000);
  const future = job('future', now + 60_000);
  expect(await hot.schedule(P, 1, past)).toBe('added');
  expect(await hot.schedule(P, 1, future)).toBe('added');

  const first = await hot.popDue(P, 1, upTo(100));
  expect(first.jobs).toEqual([{ jobId: 'past', record: past.record }]);
  expect(first.nowMs).toBeGreaterThanOrEqual(past.dueAtMs);
  // nowMs is the Redis clock, not the client's.
  expect(first.nowMs).toBeGreaterThanOrEqual(now);
  expect(first.nowMs - now).toBeLessThan(5000);
  expect((await hot.popDue(P, 1, upTo(100))).jobs).toEqual([]);
  expect(await hot.size(P)).toEqual({ due: 1, inflight: 1 });

  // A job due 300 ms from now is polled until it pops: the pop's own clock reading is never before its due time.
  const soonAt = (await hot.serverTimeMs()) + 300;
  expect(await hot.schedule(P, 1, job('soon', soonAt))).toBe('added');
  const pops: { nowMs: number; ids: string[] }[] = [];
  const soon = await pollFor('the job due in 300 ms to pop', async () => {
    const r = await hot.popDue(P, 1, upTo(100));
    pops.push({ nowMs: r.nowMs, ids: r.jobs.map((j) => j.jobId) });
    return r.jobs.length > 0 ? r : undefined;
  });
  expect(soon.jobs.map((j) => j.jobId)).toEqual(['soon']);
  expect(soon.nowMs).toBeGreaterThanOrEqual(soonAt);
  // Every earlier (empty) poll happened before the due time; at least one did, so it was not popped early.
  expect(pops.length).toBeGreaterThan(1);
  for (const p of pops.slice(0, -1)) {
    expect(p.ids).toEqual([]);
    expect(p.nowMs).toBeLessThan(soonAt);
  }
  expect(await hot.size(P)).toEqual({ due: 1, inflight: 2 });
  await redis.quit();
});

test('popDue returns at most `limit` jobs, earliest due first', async () => {
  const ns = await useNamespace('hot-set-limit');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  await hot.setEpoch(P, 1);
  const now = await hot.serverTimeMs();
  // Scheduled out of order; due 5 s, 4 s, … 1 s ago by job number.
  for (const n of [3, 1, 5, 2, 4]) {
    expect(await hot.schedule(P, 1, job(`j${n}`, now - 6000 + n * 1000))).toBe('added');
  }
  const batches: string[][] = [];
  for (let i = 0; i < 4; i++) batches.push((await hot.popDue(P, 1, upTo(2))).jobs.map((j) => j.jobId));
  expect(batches).toEqual([['j1', 'j2'], ['j3', 'j4'], ['j5'], []]);
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 5 });
  expect(
    await hot.ack(P, 1, [
      { jobId: 'j1', version: 1 },
      { jobId: 'j2', version: 1 },
      { jobId: 'j3', version: 1 },
      { jobId: 'j4', version: 1 },
      { jobId: 'j5', version: 1 },
    ]),
  ).toBe(5);
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 0 });
  await redis.quit();
});

test('a higher-version cancel removes a scheduled job; a replayed older schedule is ignored and it never pops', async () => {
  const ns = await useNamespace('hot-set-cancel');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  await hot.setEpoch(P, 1);
  await hot.restoreAttempts(P, 1, []);
  const now = await hot.serverTimeMs();
  const v1 = job('x', now - 1000, 1);
  expect(await hot.schedule(P, 1, v1)).toBe('added');
  // A redelivered event of the same version is a no-op.
  expect(await hot.schedule(P, 1, v1)).toBe('ignored');
  expect(await hot.size(P)).toEqual({ due: 1, inflight: 0 });

  expect(await hot.cancel(P, 1, 'x', 2)).toBe(true);
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 0 });
  // The cancel left no queue or ready-index entry behind either.
  const k = hot.keys(P);
  expect(await redis.exists(k.queue('default', 't1'), k.ready('default'))).toBe(0);
  // The SCHEDULED v1 event replayed after the cancel (a rebalance, a consumer restart), even as a hydration.
  expect(await hot.schedule(P, 1, v1)).toBe('ignored');
  expect(await hot.schedule(P, 1, v1, { mode: 'hydrate' })).toBe('ignored');
  // A replayed cancel of the same version is ignored too.
  expect(await hot.cancel(P, 1, 'x', 2)).toBe(false);
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 0 });
  expect((await hot.popDue(P, 1, upTo(100))).jobs).toEqual([]);

  // A cancel older than what was seen does not remove a newer schedule.
  const y3 = job('y', now - 1000, 3);
  expect(await hot.schedule(P, 1, y3)).toBe('added');
  expect(await hot.cancel(P, 1, 'y', 2)).toBe(false);
  expect((await hot.popDue(P, 1, upTo(100))).jobs).toEqual([{ jobId: 'y', record: y3.record }]);
  // A cancel of a job in flight removes it: it is not reclaimed later.
  expect(await hot.cancel(P, 1, 'y', 4)).toBe(true);
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 0 });
  await redis.quit();
});

test('a popped but unacknowledged job is handed out again only after the reclaim time; after ack it is gone', async () => {
  const ns = await useNamespace('hot-set-reclaim');
  const redis = ns.redis();
  const reclaimAfterMs = 200;
  const hot = new HotSet(redis, { reclaimAfterMs });
  await hot.setEpoch(P, 1);
  const now = await hot.serverTimeMs();
  const a = job('a', now - 1000);
  expect(await hot.schedule(P, 1, a)).toBe('added');

  const first = await hot.popDue(P, 1, upTo(10));
  expect(first.jobs).toEqual([{ jobId: 'a', record: a.record }]);
  // Its dispatcher "died": no ack. Until the reclaim time has passed nobody gets it again.
  const polls: number[] = [];
  const again = await pollFor('the unacknowledged job to be reclaimed', async () => {
    const r = await hot.popDue(P, 1, upTo(10));
    if (r.jobs.length === 0) {
      expect(r.nowMs - first.nowMs).toBeLessThanOrEqual(reclaimAfterMs);
      polls.push(r.nowMs);
      return undefined;
    }
    return r;
  });
  expect(polls.length).toBeGreaterThan(0);
  expect(again.jobs).toEqual([{ jobId: 'a', record: a.record }]);
  expect(again.nowMs - first.nowMs).toBeGreaterThanOrEqual(reclaimAfterMs);
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 1 });

  // Due jobs come first, then reclaimed ones: those are bounded by maxReclaim, not by the class
  // limit (they were counted against it when first popped).
  const b = job('b', now - 500);
  const c = job('c', now - 400);
  expect(await hot.schedule(P, 1, b)).toBe('added');
  expect(await hot.schedule(P, 1, c)).toBe('added');
  await pollFor('the reclaim time to pass on the Redis clock', async () =>
    (await hot.serverTimeMs()) - again.nowMs > reclaimAfterMs ? true : undefined,
  );
  // maxReclaim 0: the stale in-flight entry waits; only the earliest due job comes out.
  expect((await hot.popDue(P, 1, { ...upTo(1), maxReclaim: 0 })).jobs).toEqual([
    { jobId: 'b', record: b.record },
  ]);
  // maxReclaim 1: the oldest stale entry ('a'; 'b' only just went out) follows the due job.
  expect((await hot.popDue(P, 1, { ...upTo(1), maxReclaim: 1 })).jobs).toEqual([
    { jobId: 'c', record: c.record },
    { jobId: 'a', record: a.record },
  ]);
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 3 });

  // Kafka acknowledged: all are forgotten for good, however long we wait.
  expect(
    await hot.ack(P, 1, [
      { jobId: 'a', version: 1 },
      { jobId: 'b', version: 1 },
      { jobId: 'c', version: 1 },
    ]),
  ).toBe(3);
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 0 });
  const ackedAt = await hot.serverTimeMs();
  let last = ackedAt;
  while (last - ackedAt < 3 * reclaimAfterMs) {
    const r = await hot.popDue(P, 1, upTo(10));
    expect(r.jobs).toEqual([]);
    last = r.nowMs;
    await new Promise((res) => setTimeout(res, 25));
  }
  // Its version is remembered, so a replayed schedule cannot bring it back.
  expect(await hot.schedule(P, 1, a)).toBe('ignored');
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 0 });
  await redis.quit();
});

test('a newer version scheduled while the old one is in flight is neither reclaimed early nor lost to the old ack', async () => {
  const ns = await useNamespace('hot-set-reschedule');
  const redis = ns.redis();
  const hot = new HotSet(redis, { reclaimAfterMs: 200 });
  await hot.setEpoch(P, 1);
  const now = await hot.serverTimeMs();
  expect(await hot.schedule(P, 1, job('r', now - 1000, 1))).toBe('added');
  expect((await hot.popDue(P, 1, upTo(10))).jobs.map((j) => j.jobId)).toEqual(['r']);
  // Rescheduled (version 2, an hour out) before the first dispatch was acknowledged.
  const v2 = job('r', now + 3600_000, 2);
  expect(await hot.schedule(P, 1, v2)).toBe('added');
  // A hydration of the same version finds it present: no second entry.
  expect(await hot.schedule(P, 1, v2, { mode: 'hydrate' })).toBe('ignored');
  // The old dispatch's acknowledgement keeps the newer record.
  expect(await hot.ack(P, 1, [{ jobId: 'r', version: 1 }])).toBe(0);
  // Past the reclaim time nothing is handed out: the new version is due in an hour.
  await pollFor('the reclaim time to pass twice on the Redis clock', async () =>
    (await hot.serverTimeMs()) >= now + 400 ? true : undefined,
  );
  expect((await hot.popDue(P, 1, upTo(10))).jobs).toEqual([]);
  expect(await hot.size(P)).toEqual({ due: 1, inflight: 0 });
  expect((await hot.stats(P)).oldestDueMs).toBe(v2.dueAtMs);
  await redis.quit();
});

test('an acknowledged version is retired: a late hydration or replay of it never comes back, its lease is still claimable, a newer version is added', async () => {
  const ns = await useNamespace('hot-set-retire');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  const leases = new Leases(redis);
  await hot.setEpoch(P, 1);
  await hot.restoreAttempts(P, 1, []);
  const now = await hot.serverTimeMs();
  const v1 = job('x', now - 1000, 1);
  expect(await hot.schedule(P, 1, v1)).toBe('added');
  expect((await hot.popDue(P, 1, upTo(10))).jobs.map((j) => j.jobId)).toEqual(['x']);
  expect(await hot.ack(P, 1, [{ jobId: 'x', version: 1 }])).toBe(1);
  // A hydration that read v1 from PostgreSQL before the dispatch writes it now: ignored (issue 31).
  expect(await hot.schedule(P, 1, v1, { mode: 'hydrate' })).toBe('ignored');
  expect(await hot.schedule(P, 1, v1)).toBe('ignored');
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 0 });
  // The worker that received v1 claims its lease: retired is not cancelled.
  expect(await leases.claim({ jobId: 'x', shard: P, fence: 1, version: 1, epoch: 1 }, 'w1', 10_000)).toBe(
    'OK',
  );
  // A retry (v2) is a new version: added, popped, and a cancel of it (v3) still applies.
  expect(await hot.schedule(P, 1, job('x', now - 500, 2))).toBe('added');
  expect(await hot.cancel(P, 1, 'x', 3)).toBe(true);
  expect(await hot.stats(P)).toMatchObject({ jobs: 0, inflight: 0 });
  await redis.quit();
});

test('an acknowledgement takes a re-added entry of its version out of every structure, so no queue entry outlives its record', async () => {
  const ns = await useNamespace('hot-set-ack-queue');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  await hot.setEpoch(P, 1);
  const now = await hot.serverTimeMs();
  const v1 = job('y', now - 1000, 1);
  expect(await hot.schedule(P, 1, v1)).toBe('added');
  expect((await hot.popDue(P, 1, upTo(10))).jobs.map((j) => j.jobId)).toEqual(['y']);
  // The partition was cleared (leaving PostgreSQL-only mode) and rebuilt while the dispatch ran.
  await hot.clear(P, 1);
  expect(await hot.schedule(P, 1, v1, { mode: 'hydrate' })).toBe('added');
  // The old dispatch settles v1: its record, queue entry and ready index all go.
  await hot.ack(P, 1, [{ jobId: 'y', version: 1 }]);
  const k = hot.keys(P);
  expect(await redis.zrange(k.queue('default', 't1'), '0', '-1')).toEqual([]);
  expect(await redis.zrange(k.ready('default'), '0', '-1')).toEqual([]);
  expect(await redis.hlen(k.jobs)).toBe(0);
  await redis.quit();
});
