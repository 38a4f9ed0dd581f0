import { Registry } from 'prom-client';
import { expect, test } from 'vitest';
import { createWorkerMetrics } from '../src/worker-metrics.js';

test('worker metrics: durations by registered type and outcome, gauges read at scrape, counters present at 0', async () => {
  const registry = new Registry();
  let inFlight = 3;
  const m = createWorkerMetrics(registry, 'w1', (t) => t === 'email.send', {
    inFlight: () => inFlight,
    slots: () => [['critical', { reserved: 2, shared: 1 }] as const],
    breakers: () => [['email.send', 'open'] as const],
  });
  m.handled('email.send', 'succeeded', 120);
  m.handled('email.send', 'transient', 30);
  m.handled('made.up', 'permanent', 1);
  m.renewalFailed();
  m.discarded('gone');
  inFlight = 1;
  const text = await registry.metrics();
  expect(text).toContain(
    'kairos_worker_handler_duration_seconds_count{worker_id="w1",job_type="email.send",outcome="succeeded"} 1',
  );
  expect(text).toContain(
    'kairos_worker_handler_duration_seconds_count{worker_id="w1",job_type="_unregistered",outcome="permanent"} 1',
  );
  expect(text).toContain('kairos_worker_tasks_in_flight{worker_id="w1"} 1');
  expect(text).toContain(
    'kairos_worker_slots_in_use{worker_id="w1",resource_class="critical",slot="reserved"} 2',
  );
  expect(text).toContain(
    'kairos_worker_slots_in_use{worker_id="w1",resource_class="critical",slot="shared"} 1',
  );
  expect(text).toContain('kairos_worker_breaker_state{worker_id="w1",job_type="email.send"} 2');
  expect(text).toContain('kairos_worker_lease_renewal_failures_total{worker_id="w1"} 1');
  expect(text).toContain('kairos_worker_zombie_attempts_total{worker_id="w1"} 0');
  expect(text).toContain('kairos_worker_tasks_discarded_total{worker_id="w1",reason="gone"} 1');
});
