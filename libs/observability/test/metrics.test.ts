import { describe, expect, test } from 'vitest';
import { Registry, type Histogram } from 'prom-client';
import { createDelayTierMetrics, OTHER_TENANT } from '@kairos/observability';

/** The dispatch lag histogram's samples (`_bucket`, `_count`, `_sum`, told apart by metricName). */
async function lagSamples(registry: Registry) {
  const metric = registry.getSingleMetric('kairos_dispatch_lag_seconds') as Histogram | undefined;
  if (!metric) throw new Error('no dispatch lag histogram');
  return (await metric.get()).values;
}

describe('delay tier metrics', () => {
  test('a default registry carries every Kairos metric and the process metrics', async () => {
    const m = createDelayTierMetrics();
    m.hotSetSize.set({ partition: 0 }, 3);
    m.lookahead.set(3600);
    m.expired.inc();
    const text = await m.text();
    for (const name of [
      'kairos_dispatch_lag_seconds',
      'kairos_hot_set_jobs',
      'kairos_hot_set_oldest_due_age_seconds',
      'kairos_hydrated_jobs_total',
      'kairos_partition_epoch_changes_total',
      'kairos_pg_fallback_active',
      'kairos_lookahead_window_seconds',
      'kairos_dispatched_total',
      'kairos_expired_total',
      'kairos_rate_limited_total',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(text).toContain('kairos_hot_set_jobs{partition="0"} 3');
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(m.contentType).toMatch(/^text\/plain/);
  });

  test('instances with their own registries do not clash', () => {
    createDelayTierMetrics();
    expect(() => createDelayTierMetrics()).not.toThrow();
  });

  test('a given registry gets the Kairos metrics but no process metrics', async () => {
    const registry = new Registry();
    const m = createDelayTierMetrics({ registry });
    expect(m.registry).toBe(registry);
    expect(registry.getSingleMetric('kairos_dispatched_total')).toBeDefined();
    expect(await m.text()).not.toContain('process_cpu_user_seconds_total');
  });

  test('lag buckets span 1 ms to 60 s', async () => {
    const m = createDelayTierMetrics({ registry: new Registry() });
    m.dispatchLag.observe('default', 'acme', 0.0005);
    m.dispatchLag.observe('default', 'acme', 45);
    const buckets = (await lagSamples(m.registry)).filter((v) => v.metricName?.endsWith('_bucket'));
    const at = (le: number | string) => buckets.find((b) => b.labels.le === le)?.value;
    expect(at(0.001)).toBe(1);
    expect(at(30)).toBe(1);
    expect(at(60)).toBe(2);
  });

  test('tenants past the label limit are counted as _other', async () => {
    const m = createDelayTierMetrics({ registry: new Registry(), tenantLabelLimit: 2 });
    for (const tenant of ['a', 'b', 'c', 'a', 'd', 'b']) m.dispatchLag.observe('io', tenant, 0.1);
    const counts = Object.fromEntries(
      (await lagSamples(m.registry))
        .filter((v) => v.metricName?.endsWith('_count'))
        .map((v) => [v.labels.tenant, v.value]),
    );
    expect(counts).toEqual({ a: 2, b: 2, [OTHER_TENANT]: 2 });
  });

  test('a non-finite lag is dropped, not thrown', async () => {
    const m = createDelayTierMetrics({ registry: new Registry() });
    expect(() => m.dispatchLag.observe('io', 'a', Number.NaN)).not.toThrow();
    const counts = (await lagSamples(m.registry)).filter((v) => v.metricName?.endsWith('_count'));
    expect(counts).toEqual([]);
  });

  test('forgetPartition drops that partition from every partition metric, and only it', async () => {
    const m = createDelayTierMetrics({ registry: new Registry() });
    for (const partition of [1, 2]) {
      m.hotSetSize.set({ partition }, 10);
      m.oldestDueAge.set({ partition }, 0.5);
      m.hydrated.inc({ partition }, 10);
      m.epochChanges.inc({ partition });
      m.fallback.set({ partition }, 1);
    }
    m.forgetPartition(1);
    const text = await m.text();
    expect(text).not.toContain('partition="1"');
    for (const name of [
      'kairos_hot_set_jobs',
      'kairos_hot_set_oldest_due_age_seconds',
      'kairos_hydrated_jobs_total',
      'kairos_partition_epoch_changes_total',
      'kairos_pg_fallback_active',
    ]) {
      expect(text).toContain(`${name}{partition="2"}`);
    }
  });

  test.each([-1, 1.5, Number.NaN])('rejects tenantLabelLimit %s', (tenantLabelLimit) => {
    expect(() => createDelayTierMetrics({ registry: new Registry(), tenantLabelLimit })).toThrow(
      /tenantLabelLimit/,
    );
  });
});
