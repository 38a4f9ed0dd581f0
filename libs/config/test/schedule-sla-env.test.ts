import { expect, test } from 'vitest';
import { EnvError, scheduleSlaEnv } from '@kairos/config';

test('the SLA check sleeps between 1 s and 10 s by default and labels 100 schedules; bad settings are refused', () => {
  expect(scheduleSlaEnv({})).toEqual({ intervalMs: 1000, maxIntervalMs: 10_000, scheduleLabelLimit: 100 });
  expect(scheduleSlaEnv({ KAIROS_SCHEDULE_LABEL_LIMIT: '0' }).scheduleLabelLimit).toBe(0);
  expect(() =>
    scheduleSlaEnv({ KAIROS_SCHEDULE_SLA_INTERVAL_MS: '5000', KAIROS_SCHEDULE_SLA_MAX_INTERVAL_MS: '2000' }),
  ).toThrow(/must be at least KAIROS_SCHEDULE_SLA_INTERVAL_MS/);
  expect(() => scheduleSlaEnv({ KAIROS_SCHEDULE_SLA_INTERVAL_MS: '5' })).toThrow(EnvError);
});
