import { expect, test } from 'vitest';
import { apiEnv, EnvError } from '@kairos/config';

test('the API needs keys by default; auth off is refused unless it listens on loopback', () => {
  expect(apiEnv({})).toEqual({
    port: 58090,
    host: '127.0.0.1',
    metricsHost: '127.0.0.1',
    metricsPort: 58094,
    replayStaleMs: 15_000,
    auth: 'keys',
    keyCacheMs: 5000,
    defaultRatePerSec: 1000,
  });
  expect(apiEnv({ KAIROS_API_AUTH: 'off' }).auth).toBe('off');
  expect(() => apiEnv({ KAIROS_API_AUTH: 'off', KAIROS_API_HOST: '0.0.0.0' })).toThrow(EnvError);
  expect(() => apiEnv({ KAIROS_API_AUTH: 'none' })).toThrow(/keys or off/);
  expect(() => apiEnv({ KAIROS_API_RATE_PER_SEC: '0' })).toThrow(EnvError);
});

test('the API serves /metrics on a port of its own, 58094 by default', () => {
  expect(apiEnv({ KAIROS_API_METRICS_PORT: '0', KAIROS_API_METRICS_HOST: '0.0.0.0' })).toMatchObject({
    metricsPort: 0,
    metricsHost: '0.0.0.0',
  });
  expect(() => apiEnv({ KAIROS_API_METRICS_PORT: '70000' })).toThrow(/KAIROS_API_METRICS_PORT/);
});
