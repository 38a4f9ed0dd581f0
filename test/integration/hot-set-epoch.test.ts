import { expect, test } from 'vitest';
import { isKairosError } from '@kairos/core';
import { HotSet, withScripts } from '@kairos/redis';
import type { Redis } from 'ioredis';
import { useNamespace } from '../support/namespace.js';

const P = 3;

const record = (jobId: string, version = 1) => JSON.stringify({ jobId, version });

/** The Redis server clock, the one every due-time decision is made on. */
const redisNow = (redis: Redis) => withScripts(redis).serverTime();

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

test('a stale epoch owner gets STALE_EPOCH from schedule, cancel, popDue and ack, and changes nothing', async () => {
  const ns = await useNamespace('hot-set-epoch');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  const now = await redisNow(redis);

  // No epoch recorded yet: nobody owns the partition, so nobody may write.
  await expectStale(
    hot.schedule(P, 1, { jobId: 'j0', dueAtMs: now - 1000, version: 1, record: record('j0') }),
  );
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 0 });

  await hot.setEpoch(P, 1);
  expect(await hot.schedule(P, 1, { jobId: 'a', dueAtMs: now - 1000, version: 1, record: record('a') })).toBe(
    true,
  );
  expect(await hot.schedule(P, 1, { jobId: 'b', dueAtMs: now - 900, version: 1, record: record('b') })).toBe(
    true,
  );
  expect(await hot.size(P)).toEqual({ due: 2, inflight: 0 });

  // A new owner takes over.
  await hot.setEpoch(P, 2);
  await expectStale(hot.schedule(P, 1, { jobId: 'c', dueAtMs: now - 1000, version: 1, record: record('c') }));
  await expectStale(hot.cancel(P, 1, 'a', 2));
  await expectStale(hot.popDue(P, 1, 10));
  expect(await hot.size(P)).toEqual({ due: 2, inflight: 0 });

  // The new owner sees the state the old one left: 'a' still scheduled (not cancelled), no 'c'.
  const popped = await hot.popDue(P, 2, 1);
  expect(popped.jobs).toEqual([{ jobId: 'a', record: record('a') }]);
  expect(await hot.size(P)).toEqual({ due: 1, inflight: 1 });

  // The old owner can neither acknowledge the new owner's dispatch nor pop the remaining job.
  await expectStale(hot.ack(P, 1, [{ jobId: 'a', version: 1 }]));
  await expectStale(hot.popDue(P, 1, 10));
  expect(await hot.size(P)).toEqual({ due: 1, inflight: 1 });

  // An epoch that was never recorded (ahead of the stored one) is not the owner either.
  await expectStale(hot.popDue(P, 3, 10));

  expect(await hot.ack(P, 2, [{ jobId: 'a', version: 1 }])).toBe(1);
  expect(await hot.size(P)).toEqual({ due: 1, inflight: 0 });
  await redis.quit();
});

test('a job pops only once due by Redis TIME: 1 s past pops, 60 s ahead does not, never early', async () => {
  const ns = await useNamespace('hot-set-due');
  const redis = ns.redis();
  const hot = new HotSet(redis);
  await hot.setEpoch(P, 1);
  const now = await redisNow(redis);
  const past = { jobId: 'past', dueAtMs: now - 1000, version: 1, record: record('past') };
  const future = { jobId: 'future', dueAtMs: now + 60_000, version: 1, record: record('future') };
  expect(await hot.schedule(P, 1, past)).toBe(true);
  expect(await hot.schedule(P, 1, future)).toBe(true);

  const first = await hot.popDue(P, 1, 100);
  expect(first.jobs).toEqual([{ jobId: 'past', record: past.record }]);
  expect(first.nowMs).toBeGreaterThanOrEqual(past.dueAtMs);
  // nowMs is the Redis clock, not the client's.
  expect(first.nowMs).toBeGreaterThanOrEqual(now);
  expect(first.nowMs - now).toBeLessThan(5000);
  expect((await hot.popDue(P, 1, 100)).jobs).toEqual([]);
  expect(await hot.size(P)).toEqual({ due: 1, inflight: 1 });

  // A job due 300 ms from now is polled until it pops: the pop's own clock reading is never before its due time.
  const soonAt = (await redisNow(redis)) + 300;
  expect(
    await hot.schedule(P, 1, { jobId: 'soon', dueAtMs: soonAt, version: 1, record: record('soon') }),
  ).toBe(true);
  const pops: { nowMs: number; ids: string[] }[] = [];
  const soon = await pollFor('the job due in 300 ms to pop', async () => {
    const r = await hot.popDue(P, 1, 100);
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
  const now = await redisNow(redis);
  // Scheduled out of order; due 5 s, 4 s, … 1 s ago by job number.
  for (const n of [3, 1, 5, 2, 4]) {
    const jobId = `j${n}`;
    expect(
      await hot.schedule(P, 1, { jobId, dueAtMs: now - 6000 + n * 1000, version: 1, record: record(jobId) }),
    ).toBe(true);
  }
  const batches: string[][] = [];
  for (let i = 0; i < 4; i++) batches.push((await hot.popDue(P, 1, 2)).jobs.map((j) => j.jobId));
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
  const now = await redisNow(redis);
  const v1 = { jobId: 'x', dueAtMs: now - 1000, version: 1, record: record('x', 1) };
  expect(await hot.schedule(P, 1, v1)).toBe(true);
  // A redelivered event of the same version is a no-op.
  expect(await hot.schedule(P, 1, v1)).toBe(false);
  expect(await hot.size(P)).toEqual({ due: 1, inflight: 0 });

  expect(await hot.cancel(P, 1, 'x', 2)).toBe(true);
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 0 });
  // The SCHEDULED v1 event replayed after the cancel (a rebalance, a consumer restart).
  expect(await hot.schedule(P, 1, v1)).toBe(false);
  // A replayed cancel of the same version is ignored too.
  expect(await hot.cancel(P, 1, 'x', 2)).toBe(false);
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 0 });
  expect((await hot.popDue(P, 1, 100)).jobs).toEqual([]);

  // A cancel older than what was seen does not remove a newer schedule.
  const y3 = { jobId: 'y', dueAtMs: now - 1000, version: 3, record: record('y', 3) };
  expect(await hot.schedule(P, 1, y3)).toBe(true);
  expect(await hot.cancel(P, 1, 'y', 2)).toBe(false);
  expect((await hot.popDue(P, 1, 100)).jobs).toEqual([{ jobId: 'y', record: y3.record }]);
  await redis.quit();
});

test('a popped but unacknowledged job is handed out again only after the reclaim time; after ack it is gone', async () => {
  const ns = await useNamespace('hot-set-reclaim');
  const redis = ns.redis();
  const reclaimAfterMs = 200;
  const hot = new HotSet(redis, { reclaimAfterMs });
  await hot.setEpoch(P, 1);
  const now = await redisNow(redis);
  const a = { jobId: 'a', dueAtMs: now - 1000, version: 1, record: record('a') };
  expect(await hot.schedule(P, 1, a)).toBe(true);

  const first = await hot.popDue(P, 1, 10);
  expect(first.jobs).toEqual([{ jobId: 'a', record: a.record }]);
  // Its dispatcher "died": no ack. Until the reclaim time has passed nobody gets it again.
  const polls: number[] = [];
  const again = await pollFor('the unacknowledged job to be reclaimed', async () => {
    const r = await hot.popDue(P, 1, 10);
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

  // Due jobs come before reclaimed ones, and reclaimed ones count against the limit.
  const b = { jobId: 'b', dueAtMs: now - 500, version: 1, record: record('b') };
  expect(await hot.schedule(P, 1, b)).toBe(true);
  await pollFor('the reclaim time to pass on the Redis clock', async () =>
    (await redisNow(redis)) - again.nowMs > reclaimAfterMs ? true : undefined,
  );
  expect((await hot.popDue(P, 1, 1)).jobs).toEqual([{ jobId: 'b', record: b.record }]);
  expect((await hot.popDue(P, 1, 1)).jobs).toEqual([{ jobId: 'a', record: a.record }]);
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 2 });

  // Kafka acknowledged: both are forgotten for good, however long we wait.
  expect(
    await hot.ack(P, 1, [
      { jobId: 'a', version: 1 },
      { jobId: 'b', version: 1 },
    ]),
  ).toBe(2);
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 0 });
  const ackedAt = await redisNow(redis);
  let last = ackedAt;
  while (last - ackedAt < 3 * reclaimAfterMs) {
    const r = await hot.popDue(P, 1, 10);
    expect(r.jobs).toEqual([]);
    last = r.nowMs;
    await new Promise((res) => setTimeout(res, 25));
  }
  // Its version is remembered, so a replayed schedule cannot bring it back.
  expect(await hot.schedule(P, 1, a)).toBe(false);
  expect(await hot.size(P)).toEqual({ due: 0, inflight: 0 });
  await redis.quit();
});

test('a newer version scheduled while the old one is in flight is neither reclaimed early nor lost to the old ack', async () => {
  const ns = await useNamespace('hot-set-reschedule');
  const redis = ns.redis();
  const hot = new HotSet(redis, { reclaimAfterMs: 200 });
  await hot.setEpoch(P, 1);
  const now = await redisNow(redis);
  expect(
    await hot.schedule(P, 1, { jobId: 'r', dueAtMs: now - 1000, version: 1, record: record('r', 1) }),
  ).toBe(true);
  expect((await hot.popDue(P, 1, 10)).jobs.map((j) => j.jobId)).toEqual(['r']);
  // Rescheduled (version 2, an hour out) before the first dispatch was acknowledged.
  expect(
    await hot.schedule(P, 1, { jobId: 'r', dueAtMs: now + 3600_000, version: 2, record: record('r', 2) }),
  ).toBe(true);
  // The old dispatch's acknowledgement keeps the newer record.
  expect(await hot.ack(P, 1, [{ jobId: 'r', version: 1 }])).toBe(0);
  // Past the reclaim time nothing is handed out: the new version is due in an hour.
  const deadline = Date.now() + 2000;
  while ((await redisNow(redis)) < now + 400 && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
  expect((await hot.popDue(P, 1, 10)).jobs).toEqual([]);
  expect(await hot.size(P)).toEqual({ due: 1, inflight: 0 });
  await redis.quit();
});
