import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { expect, test } from 'vitest';
import type { HotRecord } from '@kairos/delay-tier';
import { InProcessPipeline } from '@kairos/ops';
import { useNamespace } from '../support/namespace.js';
import { announceClassWorker } from '../support/announce.js';
import { eventually, RESOURCE_CLASSES } from '../support/pipeline.js';

/** Jobs in the herd; HERD_JOBS=5000 for a quick run on a busy machine. */
const N = Number(process.env.HERD_JOBS ?? 100_000);
/** Jobs per createJobs call (the API's batch limit) and calls in flight at once. */
const CREATE_BATCH = 1000;
const CREATE_PARALLEL = 3;
/** The delay tier's batch: most jobs popped per class per partition per round. */
const BATCH_SIZE = 500;
const TENANTS = 10;
/** Warm-up jobs come due long after the test (they only measure creation and loading speed). */
const WARMUP_DUE_MS = 30 * 60_000;
const SAMPLE_MS = 100;
/**
 * The heap is sampled two ways during the drain. Every ~100 ms as it is (garbage included, so
 * what V8's collection schedule lets pile up, hence a generous bound over the live heap at T),
 * and every ~2 s after a full collection: the live heap, which would grow by ~1.5 KB per job
 * (record, message, headers) if the tier held the herd rather than a batch at a time.
 */
const HEAP_HEADROOM = 512 * 1024 * 1024;
const LIVE_HEADROOM = 64 * 1024 * 1024;
const LIVE_SAMPLE_MS = 2000;

/** A full garbage collection (V8's gc(), exposed at run time), so heap figures count live objects. */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const liveHeap = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

const MB = (bytes: number) => Math.round(bytes / (1024 * 1024));

test(
  `${N.toLocaleString('en')} jobs due in the same second drain in bounded batches, none early; the delay tier's memory stays bounded`,
  { timeout: 600_000 },
  async () => {
    const ns = await useNamespace('herd');
    const testStart = Date.now();

    // Bookkeeping is allocated while creating, so the drain itself adds (almost) nothing to the heap.
    const counts = new Map<string, number>(); // job id -> dispatches
    let dispatched = 0;
    let early = 0;
    let wrongDue = 0;
    let stray = 0;
    let firstAt = Infinity;
    let lastAt = -Infinity;
    let T = Infinity;
    const onDispatched = (r: HotRecord, atMs: number) => {
      const n = counts.get(r.job_id);
      if (n === undefined) {
        stray++; // not a herd job (a warm-up job, or one whose createJobs had not returned yet)
        counts.set(r.job_id, 1);
        return;
      }
      counts.set(r.job_id, n + 1);
      dispatched++;
      if (atMs < r.due_at) early++;
      if (r.due_at !== T) wrongDue++;
      if (atMs < firstAt) firstAt = atMs;
      if (atMs > lastAt) lastAt = atMs;
    };

    const p = await InProcessPipeline.start({
      services: ns.services,
      id: ns.id,
      prefix: ns.prefix,
      schema: ns.schema,
      resourceClasses: RESOURCE_CLASSES,
      logLevel: process.env.KAIROS_TEST_LOG ?? 'warn',
      api: false,
      delayTier: { batchSize: BATCH_SIZE },
      onDispatched,
    });
    ns.defer(() => p.stop());
    // No worker runs: one is announced for the herd's types, so its tasks go to the class topics.
    await announceClassWorker(ns, p, RESOURCE_CLASSES, ['herd.noop', 'herd.warmup']);
    const tier = p.delayTier;
    const partitions = ns.services.jobEventPartitions;
    await eventually('the delay tier to own every partition', () =>
      Promise.resolve(tier.ownedPartitions().length === partitions),
    );
    const owned = tier.ownedPartitions();
    const hotStats = () => Promise.all(owned.map((part) => tier.hotSet.stats(part)));
    const hotJobs = async () => (await hotStats()).reduce((s, x) => s + x.jobs, 0);

    const create = async (
      total: number,
      batch: number,
      job: (n: number) => Record<string, unknown>,
      onCreated: (id: string) => void,
    ) => {
      let next = 0;
      const loop = async () => {
        for (let b = next++; b * batch < total; b = next++) {
          const size = Math.min(batch, total - b * batch);
          const res = await p.commands.createJobs(Array.from({ length: size }, (_, i) => job(b * batch + i)));
          for (const r of res) {
            expect(r.created).toBe(true);
            onCreated(r.job.id);
          }
        }
      };
      await Promise.all(Array.from({ length: CREATE_PARALLEL }, loop));
    };

    // Warm-up: one wave of parallel batches (due long after the test) measures how fast this
    // machine creates jobs and brings them into the hot set, to pick a due time creation beats.
    const warmBatch = Math.min(CREATE_BATCH, Math.max(100, Math.ceil(N / 10)));
    const warmN = warmBatch * CREATE_PARALLEL;
    const warmDue = new Date(Date.now() + WARMUP_DUE_MS).toISOString();
    const w0 = Date.now();
    await create(
      warmN,
      warmBatch,
      () => ({ tenant: 'warmup', type: 'herd.warmup', resource_class: 'default', due_at: warmDue }),
      () => undefined,
    );
    const createMs = Date.now() - w0;
    await eventually(
      'the warm-up jobs to enter the hot set',
      async () => (await hotJobs()) >= warmN,
      120_000,
    );
    const loadMs = Date.now() - w0;
    expect(await hotJobs()).toBe(warmN);
    const estimateMs = (Math.max(createMs, loadMs) * N) / warmN;
    T = Date.now() + Math.ceil(estimateMs * 1.3) + 5000;
    const dueAt = new Date(T).toISOString();
    console.log(
      `warm-up: ${warmN} jobs created in ${createMs} ms, in the hot set after ${loadMs} ms; ` +
        `herd of ${N} due at T = now + ${T - Date.now()} ms`,
    );

    // The herd: all due at T, spread over the classes and tenants.
    const c0 = Date.now();
    await create(
      N,
      CREATE_BATCH,
      (n) => ({
        tenant: `herd-${n % TENANTS}`,
        type: 'herd.noop',
        resource_class: RESOURCE_CLASSES[n % RESOURCE_CLASSES.length],
        due_at: dueAt,
      }),
      (id) => {
        if (!counts.has(id)) counts.set(id, 0);
      },
    );
    const createdAt = Date.now();
    expect(counts.size - stray).toBe(N);
    expect(createdAt, `creating the herd overran its due time by ${createdAt - T} ms`).toBeLessThan(T);
    console.log(
      `herd created in ${createdAt - c0} ms (${Math.round((N * 1000) / (createdAt - c0))} jobs/s), ${T - createdAt} ms before T`,
    );

    // Sample the hot sets and the heap every ~100 ms until the herd has drained.
    const inflightBound = BATCH_SIZE * RESOURCE_CLASSES.length; // per partition: one pop's worth
    const s = {
      samples: 0,
      maxInflight: 0,
      maxPartitionInflight: 0,
      loadedAtT: -1,
      liveAtT: liveHeap(),
      maxHeap: 0,
      heapSamplesInDrain: 0,
      maxLive: 0,
      liveSamplesInDrain: 0,
    };
    let liveSampledAt = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const stats = await hotStats();
        const now = await tier.hotSet.serverTimeMs();
        const heap = process.memoryUsage().heapUsed;
        const inflight = stats.reduce((sum, x) => sum + x.inflight, 0);
        s.samples++;
        s.maxInflight = Math.max(s.maxInflight, inflight);
        s.maxPartitionInflight = Math.max(s.maxPartitionInflight, ...stats.map((x) => x.inflight));
        if (now < T) {
          s.loadedAtT = stats.reduce((sum, x) => sum + x.jobs, 0) - warmN;
        } else {
          s.maxHeap = Math.max(s.maxHeap, heap);
          s.heapSamplesInDrain++;
          if (Date.now() - liveSampledAt >= LIVE_SAMPLE_MS) {
            s.maxLive = Math.max(s.maxLive, liveHeap());
            s.liveSamplesInDrain++;
            liveSampledAt = Date.now();
          }
        }
        await sleep(SAMPLE_MS);
      }
    })();

    try {
      await eventually(
        `all ${N} herd jobs to be dispatched`,
        () => Promise.resolve(dispatched >= N),
        Math.max(60_000, T - Date.now() + N * 1.5),
      );
      // The last round's acknowledgements, and a few more samples.
      await eventually('the in-flight sets to empty', async () =>
        (await hotStats()).every((x) => x.inflight === 0),
      );
      await sleep(3 * SAMPLE_MS);
    } finally {
      sampling = false;
      await sampler;
    }

    const liveAfter = liveHeap();
    const drainMs = lastAt - T;
    console.log(
      `drain: ${s.loadedAtT} of ${N} jobs in the hot set at T; first dispatch T+${firstAt - T} ms, ` +
        `last T+${drainMs} ms: ${Math.round((N * 1000) / Math.max(1, drainMs))} jobs/s`,
    );
    console.log(
      `in flight: max ${s.maxInflight} over all partitions, ${s.maxPartitionInflight} in one ` +
        `(bound ${inflightBound} per partition, ${inflightBound * partitions} in all); ${s.samples} samples`,
    );
    console.log(
      `heap: live ${MB(s.liveAtT)} MB at T; during the drain max ${MB(s.maxHeap)} MB as sampled ` +
        `(${s.heapSamplesInDrain} samples, bound ${MB(s.liveAtT + HEAP_HEADROOM)} MB), max live ` +
        `${MB(s.maxLive)} MB (${s.liveSamplesInDrain} samples, bound ${MB(s.liveAtT + LIVE_HEADROOM)} MB); ` +
        `live ${MB(liveAfter)} MB after`,
    );

    // Every herd job dispatched exactly once, none before T (Redis time), nothing else dispatched.
    expect(stray).toBe(0);
    expect(early).toBe(0);
    expect(wrongDue).toBe(0);
    expect(firstAt).toBeGreaterThanOrEqual(T);
    expect(dispatched).toBe(N);
    const notOnce = [...counts].filter(([, n]) => n !== 1);
    expect(notOnce.slice(0, 10), `${notOnce.length} job(s) not dispatched exactly once`).toEqual([]);

    // Bounded batches: a pop takes at most BATCH_SIZE per class, and the dispatcher acknowledges
    // a partition's pop before popping again.
    expect(s.maxPartitionInflight).toBeLessThanOrEqual(inflightBound);
    expect(s.maxInflight).toBeLessThanOrEqual(inflightBound * partitions);
    // Bounded memory: the heap never grows with the herd, during the drain or after it.
    expect(s.heapSamplesInDrain).toBeGreaterThan(0);
    expect(s.liveSamplesInDrain).toBeGreaterThan(0);
    expect(s.maxHeap).toBeLessThan(s.liveAtT + HEAP_HEADROOM);
    expect(s.maxLive).toBeLessThan(s.liveAtT + LIVE_HEADROOM);
    expect(liveAfter).toBeLessThan(s.liveAtT + LIVE_HEADROOM);

    // Exactly N task messages on the task topics, and all N rows QUEUED in this namespace's schema.
    const admin = ns.admin();
    await admin.connect();
    let messages = 0;
    for (const rc of RESOURCE_CLASSES) {
      for (const o of await admin.fetchTopicOffsets(p.topics.tasks(rc)))
        messages += Number(o.high) - Number(o.low);
    }
    await admin.disconnect();
    expect(messages).toBe(N);
    const rows = await p.pool.query<{ state: string; n: number }>(
      `SELECT state, count(*)::int AS n FROM "${ns.schema}".jobs WHERE tenant_id LIKE 'herd-%' GROUP BY state`,
    );
    expect(rows.rows).toEqual([{ state: 'QUEUED', n: N }]);
    // Only the warm-up jobs (due in 30 min) are left in the hot sets.
    expect(await hotJobs()).toBe(warmN);
    expect(tier.fallbackPartitions()).toEqual([]);
    console.log(`herd test took ${Math.round((Date.now() - testStart) / 1000)} s`);
  },
);
