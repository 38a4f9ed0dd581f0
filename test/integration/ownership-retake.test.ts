import { createPool, migrate } from '@kairos/db';
import { createLogger } from '@kairos/observability';
import { HotSet } from '@kairos/redis';
import { Redis } from 'ioredis';
import { expect, test } from 'vitest';
import { Ownership } from '@kairos/delay-tier';
import { useNamespace } from '../support/namespace.js';

// Found by the chaos suite: a delay tier SIGSTOPped past its session lost its partitions, took
// some of them back on waking, and then dropped them again when its scripts of the old epoch
// reported stale, though it held them: assigned to it by Kafka, owned by it in PostgreSQL, and
// never dispatched again (their jobs stayed SCHEDULED).

test('a stale report about an epoch this instance held before it took the partition again does not drop the partition', async () => {
  const ns = await useNamespace('ownership-retake');
  const pool = createPool({ connectionString: ns.services.pgUrl, schema: ns.schema, max: 2 });
  ns.defer(() => pool.end());
  await migrate(pool);
  const redis = new Redis(ns.services.redisUrl);
  ns.defer(async () => void (await redis.quit()));
  const revoked: number[] = [];
  const own = new Ownership(
    pool,
    new HotSet(redis, { keyPrefix: ns.prefix }),
    'tier-a',
    createLogger({ component: 'test', level: 'silent' }),
    { rebuild: () => Promise.resolve(), onOom: () => undefined, onRevoked: (p) => void revoked.push(p) },
  );
  own.assign([0]);
  const first = await own.epoch(0)!;
  own.assign([]); // a rebalance took it away…
  own.assign([0]); // …and gave it back: a new epoch
  const second = await own.epoch(0)!;
  expect(second).toBeGreaterThan(first);
  expect(revoked).toEqual([0]);

  await own.onStale(0, first); // a script of the old epoch reports late
  expect(own.owned()).toEqual([0]);
  expect(own.heldEpoch(0)).toBe(second);
  expect(revoked).toEqual([0]);

  // Another instance's newer epoch still makes it let go.
  await pool.query(`UPDATE partition_epochs SET epoch = epoch + 1, owner = 'tier-b' WHERE partition = 0`);
  await own.onStale(0, second);
  expect(own.owned()).toEqual([]);
  expect(revoked).toEqual([0, 0]);
});
