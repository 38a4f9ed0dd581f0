import { mkdtempSync, existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DRILLS, runDrill, silentProgress, type DrillRecord } from '@kairos/ops';
import pg from 'pg';
import { expect, inject, test } from 'vitest';

test('the zombie-worker drill end to end: real processes, a real SIGSTOP, PASS, its record and plot, its namespace gone', async () => {
  const services = inject('services');
  const drill = DRILLS.find((d) => d.name === 'zombie-worker')!;
  const out = mkdtempSync(join(tmpdir(), 'kairos-drill-'));
  try {
    const record = await runDrill(drill, {
      services,
      seed: 1,
      outDir: out,
      inputs: { jobs: 2, pause: 12, work: 3000 },
      progress: silentProgress,
    });
    expect(record.verdict).toMatch(
      /^PASS zombie-worker: jobs=2, lost=0, duplicates=0, fence_bumped=2, zombie_applied=0/,
    );
    expect(record.numbers.zombie_suppressed).toBeGreaterThan(0);
    const saved = JSON.parse(readFileSync(join(out, 'zombie-worker.json'), 'utf8')) as DrillRecord;
    expect(saved.timeline.map((e) => e.event)).toEqual(
      expect.arrayContaining(['worker SIGSTOPped', 'rerun elsewhere', 'worker SIGCONTed', 'zombie exited']),
    );
    expect(readFileSync(join(out, 'zombie-worker.png')).subarray(1, 4).toString()).toBe('PNG');
    // The drill's namespace is gone: its schema is no more.
    const c = new pg.Client({ connectionString: services.pgUrl });
    await c.connect();
    const { rows } = await c.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM information_schema.schemata WHERE schema_name = $1',
      [record.namespace.schema],
    );
    await c.end();
    expect(rows[0]?.n).toBe(0);
  } finally {
    if (existsSync(out)) rmSync(out, { recursive: true });
  }
}, 120_000);
