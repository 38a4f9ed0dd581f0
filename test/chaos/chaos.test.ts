import { expect, inject, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { runChaos } from './chaos-run.js';
import { FAULTS, sharedFaultsAllowed } from './faults.js';
import { formatFaultTable } from './history.js';

// Every app a real OS process, killed for real under a seeded load; then the history checked.
// KAIROS_CHAOS_SEED repeats a run; KAIROS_CHAOS_JOBS sizes it (default 2,200 over ~4 minutes);
// KAIROS_CHAOS_SHARED=0 leaves the shared Kafka, Connect and PostgreSQL alone; KAIROS_CHAOS_ONLY=
// kafka,redis runs only the faults whose names contain one of the words.

test('under load, every fault leaves every acknowledged job terminal, none early, none dispatched after its cancel, each effect once, no finished job run again or changed', async () => {
  const ns = await useNamespace('chaos');
  const seed = Number(process.env.KAIROS_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
  const only = process.env.KAIROS_CHAOS_ONLY?.toLowerCase();
  const faults = FAULTS.filter((f) => !f.shared || sharedFaultsAllowed(inject('services').source)).filter(
    (f) => !only || only.split(',').some((w) => f.name.toLowerCase().includes(w.trim())),
  );
  if (faults.length === 0) throw new Error(`KAIROS_CHAOS_ONLY=${only} names no fault`);
  const started = Date.now();
  const r = await runChaos(ns, {
    seed,
    jobs: Number(process.env.KAIROS_CHAOS_JOBS ?? 2200),
    baselineMs: 10_000,
    windowMs: 15_000,
    faults,
  });
  console.log(
    `[chaos] seed ${seed}: ${r.acked} jobs acknowledged, ${r.runs} schedule runs, ${r.apiFailures} API requests retried, ` +
      `${((Date.now() - started) / 1000).toFixed(0)} s\n${formatFaultTable(r.rows)}`,
  );
  if (r.late.length > 0)
    console.log(`[chaos] ${r.late.length} jobs ran > 30 s late:\n${r.late.slice(0, 20).join('\n')}`);
  expect(r.violations.slice(0, 30)).toEqual([]);
  expect(r.acked + r.runs).toBeGreaterThanOrEqual(2000);
  expect(r.runs).toBeGreaterThan(0);
}, 600_000);
