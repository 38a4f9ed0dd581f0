import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { connectionsEnv, EnvError } from '@kairos/config';

const dir = mkdtempSync(join(tmpdir(), 'kairos-env-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
const CA = file('ca.pem', '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
const CERT = file('cert.pem', '-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n');
const KEY = file('key.pem', '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n');

describe('connection security settings', () => {
  test('nothing set: plaintext Kafka, an unauthenticated registry, Redis as its URL says', () => {
    expect(connectionsEnv({})).toEqual({
      kafkaSecurity: {},
      registryAuth: undefined,
      registryTls: undefined,
      redisTls: undefined,
    });
  });

  test('TLS files imply TLS; SASL from its variables; the password from a file', () => {
    const pw = file('pw', 'secret\n');
    const c = connectionsEnv({
      KAIROS_KAFKA_SSL_CA_FILE: CA,
      KAIROS_KAFKA_SSL_CERT_FILE: CERT,
      KAIROS_KAFKA_SSL_KEY_FILE: KEY,
      KAIROS_KAFKA_SASL_MECHANISM: 'SCRAM-SHA-256',
      KAIROS_KAFKA_SASL_USERNAME: 'kairos',
      KAIROS_KAFKA_SASL_PASSWORD_FILE: pw,
      KAIROS_REGISTRY_USERNAME: 'sr',
      KAIROS_REGISTRY_PASSWORD: 'sr-secret',
      KAIROS_REGISTRY_CA_FILE: CA,
      KAIROS_REDIS_TLS_CA_FILE: CA,
    });
    expect(c.kafkaSecurity.ssl).toMatchObject({ ca: expect.stringContaining('BEGIN CERTIFICATE') });
    expect(c.kafkaSecurity.sasl).toEqual({
      mechanism: 'scram-sha-256',
      username: 'kairos',
      password: 'secret',
    });
    expect(c.registryAuth).toEqual({ username: 'sr', password: 'sr-secret' });
    expect(c.registryTls?.ca).toContain('BEGIN CERTIFICATE');
    expect(c.redisTls?.ca).toContain('BEGIN CERTIFICATE');
    expect(connectionsEnv({ KAIROS_KAFKA_SSL: 'true' }).kafkaSecurity).toEqual({ ssl: {} });
  });

  test('the OAUTHBEARER token file is read again at each authentication', async () => {
    const token = file('token', 'first\n');
    const sasl = connectionsEnv({
      KAIROS_KAFKA_SASL_MECHANISM: 'oauthbearer',
      KAIROS_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: token,
    }).kafkaSecurity.sasl as { oauthBearerProvider: () => Promise<{ value: string }> };
    await expect(sasl.oauthBearerProvider()).resolves.toEqual({ value: 'first' });
    writeFileSync(token, 'second');
    await expect(sasl.oauthBearerProvider()).resolves.toEqual({ value: 'second' });
  });

  test.each([
    [
      { KAIROS_KAFKA_SSL_CA_FILE: join(dir, 'missing.pem') },
      /KAIROS_KAFKA_SSL_CA_FILE=.*missing.pem cannot be read: ENOENT/,
    ],
    [
      { KAIROS_KAFKA_SSL_CA_FILE: file('plain.txt', 'hello') },
      /KAIROS_KAFKA_SSL_CA_FILE=.* is not a PEM file/,
    ],
    [
      { KAIROS_KAFKA_SSL_CERT_FILE: CERT },
      /KAIROS_KAFKA_SSL_CERT_FILE and KAIROS_KAFKA_SSL_KEY_FILE go together/,
    ],
    [{ KAIROS_KAFKA_SSL: 'false', KAIROS_KAFKA_SSL_CA_FILE: CA }, /KAIROS_KAFKA_SSL=false but/],
    [{ KAIROS_KAFKA_SSL: 'maybe' }, /KAIROS_KAFKA_SSL=maybe must be true or false/],
    [{ KAIROS_KAFKA_SASL_MECHANISM: 'gssapi' }, /KAIROS_KAFKA_SASL_MECHANISM=gssapi must be one of/],
    [
      { KAIROS_KAFKA_SASL_MECHANISM: 'plain', KAIROS_KAFKA_SASL_USERNAME: 'u' },
      /needs KAIROS_KAFKA_SASL_USERNAME and KAIROS_KAFKA_SASL_PASSWORD/,
    ],
    [{ KAIROS_KAFKA_SASL_MECHANISM: 'oauthbearer' }, /needs KAIROS_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE/],
    [
      {
        KAIROS_KAFKA_SASL_MECHANISM: 'plain',
        KAIROS_KAFKA_SASL_USERNAME: 'u',
        KAIROS_KAFKA_SASL_PASSWORD: 'a',
        KAIROS_KAFKA_SASL_PASSWORD_FILE: CA,
      },
      /set KAIROS_KAFKA_SASL_PASSWORD or KAIROS_KAFKA_SASL_PASSWORD_FILE, not both/,
    ],
    [{ KAIROS_REGISTRY_USERNAME: 'u' }, /KAIROS_REGISTRY_USERNAME and KAIROS_REGISTRY_PASSWORD go together/],
    [{ KAIROS_REGISTRY_BEARER_TOKEN: 't', KAIROS_REGISTRY_USERNAME: 'u' }, /not both/],
  ])('%o is refused with a clear error', (env, message) => {
    expect(() => connectionsEnv(env)).toThrow(EnvError);
    expect(() => connectionsEnv(env)).toThrow(message);
  });
});
