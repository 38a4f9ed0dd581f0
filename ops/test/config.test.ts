import { expect, test } from 'vitest';
import { serviceUrls, stackConfigFromEnv } from '@kairos/ops';

test('ports come from KAIROS_* variables, with loopback defaults', () => {
  const cfg = stackConfigFromEnv('/repo', { KAIROS_PG_PORT: '6543' });
  expect(cfg.ports.postgres).toBe(6543);
  expect(cfg.ports.kafka).toBe(59092);
  expect(cfg.dataDir).toBe('/repo/.kairos');
  expect(serviceUrls(cfg).KAIROS_PG_URL).toBe('postgres://kairos@127.0.0.1:6543/kairos');
});

test('a bad port or heap is a clear error', () => {
  expect(() => stackConfigFromEnv('/repo', { KAIROS_REDIS_PORT: '70000' })).toThrow(
    'KAIROS_REDIS_PORT=70000 is not a TCP port (1-65535)',
  );
  expect(() => stackConfigFromEnv('/repo', { KAIROS_KAFKA_HEAP: 'lots' })).toThrow(/KAIROS_KAFKA_HEAP=lots/);
});
