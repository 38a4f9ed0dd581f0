import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { runChaos } from '../chaos/chaos-run.js';
import { delayTierJoin, FAULTS } from '../chaos/faults.js';
import { formatFaultTable } from '../chaos/history.js';

/**
 * Many owners: three delay tiers sharing 32 job-events partitions, two trackers, two ingests and
 * three workers on every class (of two services), each its own OS process, under the chaos suite's seeded load; a
 * tier is SIGKILLed (its partitions move to the other two, a new one starts), one joins (the
 * partitions spread over four), a tracker, an ingest and a worker are SIGKILLed. Then the chaos
 * checker's invariants: every acknowledged job terminal, none early, none after its cancel, each
 * effect once, and failover bounded.
 */

const PROCESS_FAULTS = [
  'delay-tier owner SIGKILL (standby running)',
  'tracker SIGKILL',
  'ingest SIGKILL',
  'worker SIGKILL',
];

test('three delay tiers on 32 partitions, two trackers and ingests: partitions spread and move on kills and joins, and every invariant holds', async () => {
  const ns = await useNamespace('scale');
  const seed = Number(process.env.KAIROS_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const faults = [
    ...FAULTS.filter((f) => PROCESS_FAULTS.includes(f.name)).slice(0, 1),
    delayTierJoin,
    ...FAULTS.filter((f) => PROCESS_FAULTS.includes(f.name)).slice(1),
  ];
  const r = await runChaos(ns, {
    seed,
    jobs: 1200,
    baselineMs: 10_000,
    windowMs: 15_000,
    faults,
    topology: { delayTiers: 3, trackers: 2, ingests: 2, workers: 3, partitions: 32 },
  });
  console.log(
    `[scale] seed ${seed}: ${r.acked} jobs acknowledged, ${r.runs} schedule runs\n` +
      `partitions per tier: ${r.spreads.map((s) => `${s.after}: ${s.perTier.join('/')}`).join('; ')}\n` +
      formatFaultTable(r.rows),
  );
  expect(r.violations.slice(0, 30)).toEqual([]);
  // Spread: every running tier owns a share, at the start (3) and after the join (4).
  const start = r.spreads[0]?.perTier ?? [];
  expect(start).toHaveLength(3);
  expect(Math.min(...start)).toBeGreaterThan(0);
  const joined = r.spreads.find((s) => s.after === delayTierJoin.name)?.perTier ?? [];
  expect(joined).toHaveLength(4);
  expect(Math.min(...joined)).toBeGreaterThan(0);
  expect(r.acked + r.runs).toBeGreaterThanOrEqual(1000);
}, 600_000);
