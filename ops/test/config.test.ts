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

test('the optional clusters are listed by env only when asked for, from their first port', () => {
  expect(serviceUrls(stackConfigFromEnv('/repo', {})).KAIROS_KAFKA_CLUSTER_BROKERS).toBeUndefined();
  const cfg = stackConfigFromEnv('/repo', {
    KAIROS_STACK_WITH: 'kafka-cluster,redis-cluster',
    KAIROS_KAFKA_CLUSTER_PORT: '40001',
  });
  expect(serviceUrls(cfg).KAIROS_KAFKA_CLUSTER_BROKERS).toBe(
    '127.0.0.1:40001,127.0.0.1:40002,127.0.0.1:40003',
  );
  expect(serviceUrls(cfg).KAIROS_REDIS_CLUSTER_URL).toBe(
    'redis://127.0.0.1:57001,redis://127.0.0.1:57002,redis://127.0.0.1:57003',
  );
  expect(() => stackConfigFromEnv('/repo', { KAIROS_STACK_WITH: 'kafka-clusters' })).toThrow(
    /unknown optional service "kafka-clusters"/,
  );
});
