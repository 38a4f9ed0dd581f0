import { expect, inject, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { runChaos } from './chaos-run.js';
import { FAULTS, sharedFaultsAllowed } from './faults.js';
import { formatFaultTable } from './history.js';
import { seededRandom } from '@kairos/ops';

// The soak: randomized faults for KAIROS_SOAK_MINUTES (default 10), the same load and checker.
// Outside the default suite: `KAIROS_SOAK_MINUTES=30 npm run test:soak`.

const minutes = Number(process.env.KAIROS_SOAK_MINUTES ?? 10);

test(
  `soak: ${minutes} minutes of randomized faults under load, the history intact`,
  async () => {
    const ns = await useNamespace('soak');
    const seed = Number(process.env.KAIROS_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const rnd = seededRandom(seed ^ 0xfa17);
    const pool = FAULTS.filter((f) => !f.shared || sharedFaultsAllowed(inject('services').source));
    const windowMs = 20_000;
    const count = Math.max(1, Math.floor((minutes * 60_000 - 10_000) / windowMs));
    const faults = Array.from({ length: count }, () => pool[Math.floor(rnd() * pool.length)]!);
    const r = await runChaos(ns, {
      seed,
      jobs: Math.round(minutes * 60 * 12),
      baselineMs: 10_000,
      windowMs,
      faults,
    });
    console.log(`[soak] seed ${seed}: ${r.acked} jobs, ${r.runs} schedule runs\n${formatFaultTable(r.rows)}`);
    if (r.late.length > 0)
      console.log(`[chaos] ${r.late.length} jobs ran > 30 s late:\n${r.late.slice(0, 20).join('\n')}`);
    expect(r.violations.slice(0, 30)).toEqual([]);
  },
  (minutes + 10) * 60_000,
);
