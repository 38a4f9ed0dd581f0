import { describe, expect, test } from 'vitest';
import { createRegistryClient, kafkaSecurityConfig, topicCatalogue } from '@kairos/kafka';

const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n';

describe('Kafka connection security', () => {
  test('plaintext by default; TLS with the system CAs or a CA; SASL passed through', () => {
    expect(kafkaSecurityConfig({})).toEqual({});
    expect(kafkaSecurityConfig({ ssl: true })).toEqual({ ssl: {} });
    const s = kafkaSecurityConfig({
      ssl: { ca: PEM, servername: 'kafka.internal' },
      sasl: { mechanism: 'scram-sha-512', username: 'kairos', password: 'secret' },
    });
    expect(s.ssl).toEqual({ ca: PEM, servername: 'kafka.internal' });
    expect(s.sasl).toEqual({ mechanism: 'scram-sha-512', username: 'kairos', password: 'secret' });
  });

  test('an OAUTHBEARER provider hook is kept as given', async () => {
    const provider = () => Promise.resolve({ value: 'token-1' });
    const s = kafkaSecurityConfig({ sasl: { mechanism: 'oauthbearer', oauthBearerProvider: provider } });
    expect(s.sasl).toMatchObject({ mechanism: 'oauthbearer' });
    await expect((s.sasl as { oauthBearerProvider: typeof provider }).oauthBearerProvider()).resolves.toEqual(
      {
        value: 'token-1',
      },
    );
  });

  test('each bad option is a RangeError naming it', () => {
    const bad = (o: unknown) => () => kafkaSecurityConfig(o as never);
    expect(bad({ sasl: { mechanism: 'gssapi' } })).toThrow(
      /sasl.mechanism must be one of plain, scram-sha-256/,
    );
    expect(bad({ sasl: { mechanism: 'plain', username: 'u' } })).toThrow(/sasl.password .* for plain/);
    expect(bad({ sasl: { mechanism: 'scram-sha-256', password: 'p' } })).toThrow(/sasl.username/);
    expect(bad({ sasl: { mechanism: 'oauthbearer' } })).toThrow(
      /sasl.oauthBearerProvider must be a function/,
    );
    expect(bad({ ssl: { ca: '/etc/ssl/ca.pem' } })).toThrow(/ssl.ca must be PEM text .*file path/);
    expect(bad({ ssl: { cert: PEM } })).toThrow(/ssl.cert and ssl.key go together/);
    expect(bad({ ssl: { ca: [PEM, 'nope'] } })).toThrow(/ssl.ca\[1\] must be PEM/);
    expect(bad({ ssl: 'yes' })).toThrow(/ssl must be true, false or an object/);
    expect(() => kafkaSecurityConfig({ ssl: { cert: PEM, key: KEY } })).not.toThrow();
  });
});

describe('registry connection', () => {
  test('bad URLs, TLS without https and empty credentials are refused', () => {
    expect(() => createRegistryClient({ url: 'registry:8081' })).toThrow(
      /registry url must be an http\(s\) URL/,
    );
    expect(() => createRegistryClient({ url: 'http://r:8081', tls: { ca: PEM } })).toThrow(/not https/);
    expect(() => createRegistryClient({ url: 'http://r:8081', auth: { bearerToken: '' } })).toThrow(
      /bearerToken must be a non-empty string/,
    );
    expect(() =>
      createRegistryClient({ url: 'http://r:8081', auth: { username: '', password: 'x' } }),
    ).toThrow(/non-empty username/);
    expect(() =>
      createRegistryClient({
        url: 'https://r:8081',
        auth: { username: 'u', password: 'p' },
        tls: { ca: PEM },
      }),
    ).not.toThrow();
  });
});

describe('topic durability', () => {
  test('replication factor and min.insync.replicas apply to every topic', () => {
    const specs = topicCatalogue({ replicationFactor: 3, minInsyncReplicas: 2 });
    expect(specs.every((s) => s.replicationFactor === 3 && s.configs['min.insync.replicas'] === '2')).toBe(
      true,
    );
    expect(
      topicCatalogue().every((s) => s.replicationFactor === 1 && !('min.insync.replicas' in s.configs)),
    ).toBe(true);
  });

  test('an impossible combination is refused', () => {
    expect(() => topicCatalogue({ replicationFactor: 0 })).toThrow(/replicationFactor must be an integer/);
    expect(() => topicCatalogue({ replicationFactor: 1, minInsyncReplicas: 2 })).toThrow(
      /minInsyncReplicas must be an integer from 1 to the replication factor \(1\)/,
    );
  });
});
