import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect, test } from 'vitest';
import { scriptSource } from '@kairos/redis';
import { useNamespace, type Namespace } from '../support/namespace.js';
import { eventually, startPipeline, type Pipeline } from '../support/pipeline.js';

/**
 * Lateness allowed after the due time (by Redis time): a timer, a pop, a claim and a produce on a
 * shared 2-core machine. The old 20 ms poll alone cost up to 20 ms; a missed wake costs seconds.
 */
const LATE_MS = 250;

const job = (dueAt: number) => ({
  tenant: 'acme',
  type: 'wake.check',
  resource_class: 'default',
  due_at: new Date(dueAt).toISOString(),
});

async function dispatchedAt(p: Pipeline, jobId: string, timeoutMs = 30_000) {
  await eventually(
    `job ${jobId} to be dispatched`,
    () => p.dispatched.some((d) => d.record.job_id === jobId),
    timeoutMs,
  );
  const d = p.dispatched.find((x) => x.record.job_id === jobId);
  if (!d) throw new Error('unreachable');
  return { atMs: d.atMs, dueAt: d.record.due_at };
}

test('the dispatcher sleeps until the next due time and wakes for an earlier job scheduled meanwhile, with no poll to find them', async () => {
  const ns = await useNamespace('dispatch-wake');
  // No safety-net wake within the test: only computed deadlines and events can wake it.
  const p = await startPipeline(ns, { delayTier: { maxSleepMs: 60_000, lookaheadMs: 2000 } });

  // Beyond the window: its event leaves it in PostgreSQL, the pre-loader brings it in ~2 s
  // before due, and the pop that follows returns its due time to sleep until.
  const [far] = await p.commands.createJobs([job(Date.now() + 7000)]);
  const a = await dispatchedAt(p, far!.job.id);
  expect(a.atMs).toBeGreaterThanOrEqual(a.dueAt); // never early, by Redis time
  expect(a.atMs - a.dueAt).toBeLessThan(LATE_MS);

  // Now the dispatcher sleeps (nothing else is due; the next safety-net visit is a minute away).
  // A job later in the window, then one due sooner than that: each is released on time.
  const [later] = await p.commands.createJobs([job(Date.now() + 1800)]);
  const [sooner] = await p.commands.createJobs([job(Date.now() + 900)]);
  const s = await dispatchedAt(p, sooner!.job.id);
  const l = await dispatchedAt(p, later!.job.id);
  for (const d of [s, l]) {
    expect(d.atMs).toBeGreaterThanOrEqual(d.dueAt);
    expect(d.atMs - d.dueAt).toBeLessThan(LATE_MS);
  }
});

/** Redis commands the delay tier's own connection sends over `ms`, by command (MONITOR). */
async function tierCommands(ns: Namespace, ms: number): Promise<{ name: string; args: string[] }[]> {
  const redis = ns.redis();
  const list = String(await redis.call('CLIENT', 'LIST'));
  const addrs = new Set(
    list
      .split('\n')
      .filter((line) => line.includes(` name=${ns.prefix}delay-tier-`))
      .map((line) => /addr=(\S+)/.exec(line)?.[1] ?? ''),
  );
  expect(addrs.size).toBeGreaterThan(0);
  const monitor = await redis.monitor();
  const seen: { name: string; args: string[] }[] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (addrs.has(source)) seen.push({ name: String(args[0]).toLowerCase(), args: args.map(String) });
  });
  await sleep(ms);
  monitor.disconnect();
  await redis.quit();
  return seen;
}

test('idle, the dispatcher pops each partition about once per safety-net interval, not every 20 ms', async () => {
  const ns = await useNamespace('dispatch-idle');
  const p = await startPipeline(ns); // the defaults: safety net 1 s
  const partitions = ns.services.jobEventPartitions;
  await eventually(
    'the tier to own every partition',
    () => p.delayTier.ownedPartitions().length === partitions,
  );
  await sleep(1500); // start-up rounds (rebuilds, first pops) are over

  const WINDOW_MS = 3000;
  const cmds = await tierCommands(ns, WINDOW_MS);
  const popSha = createHash('sha1').update(scriptSource('kairosPopDue')).digest('hex');
  const pops = cmds.filter((c) => ['evalsha', 'eval'].includes(c.name) && c.args[1] === popSha).length;
  // One visit per partition per second at most (plus one for the interval's edges); the old
  // 20 ms poll made ~50 per partition per second.
  expect(pops).toBeLessThanOrEqual(partitions * (WINDOW_MS / 1000 + 1));
  // Everything the tier sends idle (pops, limits, reaper, pre-loader, metrics): a few per second
  // per partition, where the poll alone sent ~150.
  expect(cmds.length / (WINDOW_MS / 1000)).toBeLessThan(partitions * 6);
});
