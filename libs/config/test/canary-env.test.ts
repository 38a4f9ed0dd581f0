import { expect, test } from 'vitest';
import { canaryEnv, EnvError } from '@kairos/config';

test('the canary runs every minute and alerts after two by default; 0 turns it off; bad settings are refused', () => {
  expect(canaryEnv({})).toEqual({ intervalMs: 60_000, stallMs: 120_000, webhookUrl: undefined });
  expect(canaryEnv({ KAIROS_CANARY_INTERVAL_MS: '0' }).intervalMs).toBe(0);
  expect(canaryEnv({ KAIROS_ALERT_WEBHOOK_URL: 'http://am:9093/api/v2/alerts' }).webhookUrl).toBe(
    'http://am:9093/api/v2/alerts',
  );
  expect(() => canaryEnv({ KAIROS_CANARY_INTERVAL_MS: '50' })).toThrow(/0 \(off\) or at least 100/);
  expect(() => canaryEnv({ KAIROS_CANARY_INTERVAL_MS: '60000', KAIROS_CANARY_STALL_MS: '60000' })).toThrow(
    /must be longer than KAIROS_CANARY_INTERVAL_MS/,
  );
  expect(() => canaryEnv({ KAIROS_CANARY_STALL_MS: 'soon' })).toThrow(EnvError);
  expect(() => canaryEnv({ KAIROS_ALERT_WEBHOOK_URL: 'alertmanager:9093' })).toThrow(/http\(s\) URL/);
});
