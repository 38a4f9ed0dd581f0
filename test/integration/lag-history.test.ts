import { lagBucket } from '@kairos/core';
import { migrate } from '@kairos/db';
import { LagHistory } from '@kairos/delay-tier';
import { silentLogger } from '@kairos/observability';
import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually } from '../support/pipeline.js';

// The delay tier's dispatch lag history against real PostgreSQL: samples are written in batches
// (one row per class, minute and instance, later flushes adding to it), a failed write keeps its
// samples for the next one, and stopping writes what is left.

interface Row {
  resource_class: string;
  instance: string;
  buckets: string[];
  count: string;
  sum_ms: number;
  max_ms: number;
}

test('batched per class and minute, merged across flushes, kept over a failed write, flushed on stop', async () => {
  const ns = await useNamespace('lag-history');
  const pool = ns.pgPool(2);
  ns.defer(() => pool.end());
  await migrate(pool);
  const log = silentLogger();
  const warns: string[] = [];
  log.warn = ((_obj: unknown, msg: string) => void warns.push(msg)) as typeof log.warn;
  const history = new LagHistory({ pool, instanceId: 'tier-a', log, flushMs: 200 });
  await history.start();
  ns.defer(() => history.stop());
  const rows = async () =>
    (await pool.query<Row>('SELECT * FROM dispatch_lag_minutes ORDER BY resource_class')).rows;
  const total = async () => (await rows()).reduce((n, r) => n + Number(r.count), 0);

  const minute = Math.floor(Date.now() / 60_000) * 60_000;
  for (let i = 0; i < 1000; i++) history.observe(i % 2 ? 'io' : 'cpu', minute + (i % 60_000), i % 100);
  await eventually('the first batch written', async () => (await total()) === 1000, 10_000);
  const first = await rows();
  expect(first.map((r) => [r.resource_class, r.instance, Number(r.count)])).toEqual([
    ['cpu', 'tier-a', 500],
    ['io', 'tier-a', 500],
  ]);
  expect(first[0]!.max_ms).toBe(98);
  expect(first[0]!.buckets.map(Number).reduce((a, b) => a + b, 0)).toBe(500);

  // A later flush of the same minute adds to the row, bucket by bucket.
  for (let i = 0; i < 10; i++) history.observe('io', minute + 1, 5000);
  await eventually('the second batch added', async () => (await total()) === 1010, 10_000);
  const io = (await rows()).find((r) => r.resource_class === 'io')!;
  expect(Number(io.count)).toBe(510);
  expect(Number(io.buckets[lagBucket(5000)])).toBe(10);
  expect(io.max_ms).toBe(5000);

  // PostgreSQL refuses the write: logged, kept, written by a later flush once it accepts again.
  // (A constraint no row meets: renaming the table would send the write to the search path's next schema.)
  await pool.query('ALTER TABLE dispatch_lag_minutes ADD CONSTRAINT refuse CHECK (false) NOT VALID');
  history.observe('io', minute + 2, 7);
  await eventually('a failed write logged', () => warns.length >= 1, 10_000);
  await pool.query('ALTER TABLE dispatch_lag_minutes DROP CONSTRAINT refuse');
  await eventually('the kept sample written', async () => (await total()) === 1011, 10_000);

  // Stopping writes what is pending at once.
  history.observe('cpu', minute + 3, 1);
  await history.stop();
  expect(await total()).toBe(1012);
}, 60_000);
