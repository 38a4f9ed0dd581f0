import { expect, test } from 'vitest';
import { Registry } from 'prom-client';
import { createScheduleMetrics } from '@kairos/observability';

test('kairos_schedule_runs_total counts late, misfired and skipped runs per capped schedule', async () => {
  const registry = new Registry();
  const m = createScheduleMetrics(registry, 1);
  m.runs('s1', 'late', 2);
  m.runs('s1', 'skipped');
  m.runs('s2', 'misfired', 3);
  m.runs('s3', 'misfired', 0);
  const text = await registry.metrics();
  expect(text).toContain('kairos_schedule_runs_total{schedule="s1",outcome="late"} 2');
  expect(text).toContain('kairos_schedule_runs_total{schedule="s1",outcome="skipped"} 1');
  expect(text).toContain('kairos_schedule_runs_total{schedule="_other",outcome="misfired"} 3');
  expect(text).not.toContain('s3');
});
