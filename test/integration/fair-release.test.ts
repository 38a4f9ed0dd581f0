import { setTimeout as sleep } from 'node:timers/promises';
import { expect, test } from 'vitest';
import type { DelayTierOptions, HotRecord } from '@kairos/delay-tier';
import { InProcessPipeline } from '@kairos/ops';
import { useNamespace, type Namespace } from '../support/namespace.js';
import { announceClassWorker } from '../support/announce.js';
import { eventually, RESOURCE_CLASSES } from '../support/pipeline.js';

/** The delay tier's default: jobs per tenant per round-robin pass at weight 1. */
const QUANTUM = 16;

interface Dispatch {
  readonly record: HotRecord;
  readonly atMs: number;
}

/** The whole pipeline (no API) with these delay-tier options; every dispatch logged in order. */
async function startTier(
  ns: Namespace,
  delayTier: Partial<DelayTierOptions>,
): Promise<{ p: InProcessPipeline; log: Dispatch[] }> {
  const log: Dispatch[] = [];
  const p = await InProcessPipeline.start({
    services: ns.services,
    id: ns.id,
    prefix: ns.prefix,
    schema: ns.schema,
    resourceClasses: RESOURCE_CLASSES,
    logLevel: process.env.KAIROS_TEST_LOG ?? 'warn',
    api: false,
    delayTier,
    onDispatched: (record, atMs) => log.push({ record, atMs }),
  });
  ns.defer(() => p.stop());
  // No worker runs: one is announced for the test's types, so its tasks go to the class topics.
  const types = ['fair.a', 'fair.b', 'fair.weighted', ...RESOURCE_CLASSES.map((rc) => `fair.${rc}`)];
  await announceClassWorker(ns, p, RESOURCE_CLASSES, types);
  await eventually('the delay tier to own every partition', () =>
    Promise.resolve(p.delayTier.ownedPartitions().length === ns.services.jobEventPartitions),
  );
  return { p, log };
}

async function hotJobs(p: InProcessPipeline): Promise<number> {
  const stats = await Promise.all(
    p.delayTier.ownedPartitions().map((part) => p.delayTier.hotSet.stats(part)),
  );
  return stats.reduce((s, x) => s + x.jobs, 0);
}

/** Creates jobs in batches of 1,000, two calls at a time; returns their ids in request order. */
async function createAll(p: InProcessPipeline, jobs: readonly Record<string, unknown>[]): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < jobs.length; i += 2000) {
    const chunks = [jobs.slice(i, i + 1000), jobs.slice(i + 1000, i + 2000)].filter((c) => c.length > 0);
    for (const res of await Promise.all(chunks.map((c) => p.commands.createJobs(c)))) {
      for (const r of res) {
        expect(r.created).toBe(true);
        ids.push(r.job.id);
      }
    }
  }
  return ids;
}

/**
 * Holds a class's due jobs back while a backlog is built (so the backlog is all in the hot set
 * and due when release starts): a rate limit of one token per 1,000 s whose one token the test
 * holds. The dispatcher takes tokens every round and refunds what it did not use, so we may
 * have to ask more than once before we are the one holding the token.
 */
async function closeGate(p: InProcessPipeline, resourceClass: string): Promise<void> {
  await p.delayTier.admin().setRateLimit(resourceClass, { ratePerSec: 0.001, burst: 1 });
  let held = 0;
  await eventually(`the ${resourceClass} gate's only token`, async () => {
    held += (await p.delayTier.rateLimiter.take(new Map([[resourceClass, 1]]))).get(resourceClass) ?? 0;
    return held >= 1;
  });
}

const openGate = (p: InProcessPipeline, resourceClass: string) =>
  p.delayTier.admin().clearRateLimit(resourceClass);

function countBy<T>(items: readonly T[], key: (t: T) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of items) out[key(t)] = (out[key(t)] ?? 0) + 1;
  return out;
}

/** Every id dispatched exactly once, nothing else dispatched, none before its due time. */
function expectOnceEach(log: readonly Dispatch[], ids: readonly string[]): void {
  const n = countBy(log, (d) => d.record.job_id);
  expect(Object.keys(n).length).toBe(ids.length);
  expect(ids.filter((id) => n[id] !== 1)).toEqual([]);
  expect(log.filter((d) => d.atMs < d.record.due_at)).toEqual([]);
}

/** A's backlog; FAIR_BACKLOG=2000 for a quick run on a busy machine. */
const BACKLOG = Number(process.env.FAIR_BACKLOG ?? 5000);

test(`a tenant's job due behind another tenant's backlog of ${BACKLOG} goes out within a quantum of it`, async () => {
  const ns = await useNamespace('fair-tenants');
  // A small batch, so A's backlog takes many rounds (~BACKLOG / (batch × partitions)) to drain.
  const batch = 50;
  const { p, log } = await startTier(ns, { batchSize: batch, tenantQuantum: QUANTUM });
  const partitions = ns.services.jobEventPartitions;

  await closeGate(p, 'default');
  const aIds = await createAll(
    p,
    Array.from({ length: BACKLOG }, () => ({
      tenant: 'tenant-a',
      type: 'fair.a',
      resource_class: 'default',
    })),
  );
  await eventually("A's backlog to be in the hot set", async () => (await hotJobs(p)) === BACKLOG);

  const bDue = (await p.delayTier.hotSet.serverTimeMs()) + 3000;
  const [b] = await p.commands.createJobs([
    { tenant: 'tenant-b', type: 'fair.b', resource_class: 'default', due_at: new Date(bDue).toISOString() },
  ]);
  const bId = b!.job.id;
  await eventually("B's job to be in the hot set", async () => (await hotJobs(p)) === BACKLOG + 1);
  // Release A's backlog 100 ms before B comes due.
  const bLoadedEarly = (await p.delayTier.hotSet.serverTimeMs()) <= bDue - 100;
  while ((await p.delayTier.hotSet.serverTimeMs()) < bDue - 100) await sleep(5);
  const openedAt = await p.delayTier.hotSet.serverTimeMs();
  await openGate(p, 'default');

  await eventually('every job to be dispatched', () => Promise.resolve(log.length >= BACKLOG + 1));
  expectOnceEach(log, [...aIds, bId]);

  const bIndex = log.findIndex((d) => d.record.job_id === bId);
  const bDispatch = log[bIndex]!;
  const before = log.slice(0, bIndex);
  const aAfterDue = before.filter((d) => d.atMs >= bDue);
  const aAfterDueSameShard = aAfterDue.filter((d) => d.record.shard === bDispatch.record.shard);
  const aAfterB = log.length - bIndex - 1;
  const lastA = log.at(-1)!.atMs;
  console.log(
    `B loaded ${bLoadedEarly ? 'before' : 'AFTER'} A's release; A released at B.due${openedAt - bDue} ms (Redis time); ` +
      `B dispatched at B.due+${bDispatch.atMs - bDue} ms; A dispatched before B: ${before.length} ` +
      `(${aAfterDue.length} after B's due time, ${aAfterDueSameShard.length} of them from B's partition), ` +
      `after B: ${aAfterB}; A's backlog drained at B.due+${lastA - bDue} ms`,
  );

  // The bound, from pop-due.lua: in B's partition the first pop at or after B's due time serves
  // tenants in order of their oldest due job, A (due earlier) then B, each at most quantum ×
  // weight per pass, so at most QUANTUM of A's jobs precede B in that pop, and none in an
  // earlier pop (earlier pops ran before B was due). Across partitions the dispatcher pops one
  // partition after the other, so between B coming due and B's partition's next pop, each other
  // partition pops at most once: at most `batch` more of A's jobs each. The dispatch time logged
  // is the latest pop time of the round (round-dispatch.ts), so the round popped just before B's
  // due time can be logged at or after it: one more batch of each partition at most.
  expect(aAfterDueSameShard.length).toBeLessThanOrEqual(batch + QUANTUM);
  expect(aAfterDue.length).toBeLessThanOrEqual(partitions * batch + (partitions - 1) * batch + QUANTUM);
  // B did not wait for A's backlog: most of it was still waiting when B went out.
  expect(aAfterB).toBeGreaterThan(BACKLOG / 2);
});

test('a rate-limited class is released at its rate, never holding back the other classes', async () => {
  const ns = await useNamespace('fair-rate');
  const { p, log } = await startTier(ns, {});
  const rate = 40;
  const burst = 10;
  const IO = 200;
  const OTHERS = 20;
  // Cleared once this many io jobs went out: the first ones alone span (CLEAR_AT − burst) / rate.
  const CLEAR_AT = 165;
  await p.delayTier.admin().setRateLimit('io', { ratePerSec: rate, burst });

  // 200 io jobs with a critical and a default job after every 10th, in one batch, all due at the
  // same instant just ahead, so that all are in the hot set (not still on their way through the
  // outbox) when they come due: what follows measures release, not event delivery.
  const due = (await p.delayTier.hotSet.serverTimeMs()) + 2000;
  const job = (rc: string) => ({
    tenant: 'acme',
    type: `fair.${rc}`,
    resource_class: rc,
    due_at: new Date(due).toISOString(),
  });
  const jobs: Record<string, unknown>[] = [];
  for (let i = 0; i < IO; i++) {
    jobs.push(job('io'));
    if (i % (IO / OTHERS) === IO / OTHERS - 1) jobs.push(job('critical'), job('default'));
  }
  const ids = await createAll(p, jobs);
  await eventually('the jobs to be in the hot set', async () => (await hotJobs(p)) === ids.length);
  const loadedEarly = (await p.delayTier.hotSet.serverTimeMs()) < due;
  const io = () => log.filter((d) => d.record.resource_class === 'io');
  await eventually(`${CLEAR_AT} io jobs to be dispatched`, () => Promise.resolve(io().length >= CLEAR_AT));
  const clearedAt = await p.delayTier.hotSet.serverTimeMs();
  await openGate(p, 'io');
  await eventually('every job to be dispatched', () => Promise.resolve(log.length >= ids.length));
  expectOnceEach(log, ids);

  // critical and default never wait behind io's limit.
  const ioLog = io();
  const sixtiethIo = log.indexOf(ioLog[59]!);
  const others = log.filter((d) => d.record.resource_class !== 'io');
  expect(countBy(others, (d) => d.record.resource_class)).toEqual({ critical: OTHERS, default: OTHERS });
  expect(others.filter((d) => log.indexOf(d) > sixtiethIo)).toEqual([]);

  // While limited, io never goes faster than the bucket allows: in any window of Redis time,
  // at most burst + rate × window jobs. Tokens are taken a moment (two Redis round trips) before
  // the pop that stamps the dispatch time, hence one job of slack.
  const limited = ioLog.filter((d) => d.atMs < clearedAt).map((d) => d.atMs);
  let worst = -Infinity;
  for (let i = 0; i < limited.length; i++) {
    if (i > 0 && limited[i] === limited[i - 1]) continue; // a window starts at a pop
    for (let j = i; j < limited.length; j++) {
      const allowed = burst + (rate * (limited[j]! - limited[i]!)) / 1000;
      worst = Math.max(worst, j - i + 1 - allowed);
    }
  }
  const t0 = ioLog[0]!.atMs;
  const span = ioLog.at(-1)!.atMs - t0;
  const rest = ioLog.filter((d) => d.atMs >= clearedAt);
  const restMs = rest.at(-1)!.atMs - clearedAt;
  const othersLag = Math.max(...others.map((d) => d.atMs - d.record.due_at));
  console.log(
    `${loadedEarly ? 'all in the hot set before due' : 'SOME LOADED AFTER DUE'}; ` +
      `io: ${limited.length} dispatched over ${limited.at(-1)! - t0} ms while limited ` +
      `(${Math.round((1000 * (limited.length - burst)) / (limited.at(-1)! - t0))}/s after the burst; ` +
      `worst window ${worst.toFixed(2)} jobs over burst + rate × window), the other ${rest.length} within ` +
      `${restMs} ms of clearing the limit; io span ${span} ms; critical and default: max lag ${othersLag} ms, ` +
      `all out after ${ioLog.filter((d) => log.indexOf(d) < log.indexOf(others.at(-1)!)).length} io jobs`,
  );
  expect(limited.length).toBeGreaterThanOrEqual(CLEAR_AT);
  expect(worst).toBeLessThanOrEqual(1);
  expect(span).toBeGreaterThanOrEqual(((IO - burst) / rate) * 0.8 * 1000);
  // Cleared at run time: the rest goes out at once, faster than even a full bucket would allow.
  expect(rest.length).toBeGreaterThan(burst);
  expect(restMs).toBeLessThan(((rest.length - burst) / rate) * 1000);
});

test('weighted tenants share a class in proportion to their weights', async () => {
  const ns = await useNamespace('fair-weights');
  const EACH = 2000;
  // A batch of two passes (quantum × (3 + 1) = 64 jobs each), small enough that a partition's
  // share of both backlogs (~EACH / partitions per tenant) takes several pops.
  const batch = 2 * QUANTUM * 4;
  const { p, log } = await startTier(ns, {
    batchSize: batch,
    tenantQuantum: QUANTUM,
    tenantWeights: new Map([['tenant-a', 3]]),
  });
  await closeGate(p, 'default');
  const jobs = Array.from({ length: 2 * EACH }, (_, i) => ({
    tenant: i % 2 === 0 ? 'tenant-a' : 'tenant-b',
    type: 'fair.weighted',
    resource_class: 'default',
  }));
  const ids = await createAll(p, jobs);
  await eventually('both backlogs to be in the hot set', async () => (await hotJobs(p)) === 2 * EACH);
  await openGate(p, 'default');
  await eventually('every job to be dispatched', () => Promise.resolve(log.length >= 2 * EACH));
  expectOnceEach(log, ids);

  const first = countBy(log.slice(0, 800), (d) => d.record.tenant_id);
  const ratio = (first['tenant-a'] ?? 0) / (first['tenant-b'] ?? 0);
  console.log(
    `first 800 dispatches: tenant-a ${first['tenant-a']}, tenant-b ${first['tenant-b']}: ratio ${ratio.toFixed(2)}`,
  );
  expect(ratio).toBeGreaterThanOrEqual(2);
  expect(ratio).toBeLessThanOrEqual(4);
});
