import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

/**
 * A round whose claim fails (PostgreSQL refusing, Kafka down) leaves its popped jobs in flight in
 * Redis; the delay tier sends them again as soon as the failure clears, not after the in-flight
 * reclaim time (30 s), which is only the net for a delay tier that died.
 */
test('popped jobs whose dispatch failed go out once the failure clears, well before the in-flight reclaim', async () => {
  const ns = await useNamespace('dispatch-retry');
  const p = await startPipeline(ns);
  // Every attempt row the claim writes is refused; a sequence (not rolled back) counts the refusals.
  await p.pool.query(`CREATE SEQUENCE refused_claims`);
  await p.pool.query(`CREATE FUNCTION refuse_claim() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN PERFORM nextval('refused_claims'); RAISE EXCEPTION 'claims refused by the test'; END $$`);
  await p.pool.query(
    'CREATE TRIGGER refuse_claims BEFORE INSERT ON attempts FOR EACH ROW EXECUTE FUNCTION refuse_claim()',
  );
  const refused = async () =>
    Number((await p.pool.query<{ n: string }>('SELECT last_value AS n FROM refused_claims')).rows[0]?.n);
  const [id] = (
    await p.commands.createJobs([
      { tenant: 'acme', type: 'retry.work', resource_class: 'default', payload: {} },
    ])
  ).map((r) => r.job.id);
  // Refused more than once: the tier retried while the failure lasted.
  await eventually('the claim to be refused (and retried)', async () => (await refused()) >= 2, 20_000);
  expect(p.dispatched.some((d) => d.record.job_id === id)).toBe(false);

  await p.pool.query('DROP TRIGGER refuse_claims ON attempts');
  const clearedAt = Date.now();
  await eventually(
    'the job to be dispatched',
    () => p.dispatched.some((d) => d.record.job_id === id),
    15_000,
  );
  expect(Date.now() - clearedAt).toBeLessThan(15_000);
  expect(p.dispatched.filter((d) => d.record.job_id === id)).toHaveLength(1);
});
