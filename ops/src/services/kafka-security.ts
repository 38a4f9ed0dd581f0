import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { issueCertificate } from './local-ca.js';

/**
 * The local Kafka's second listener, SASL_SSL, as a company cluster has it: a CA and a broker
 * certificate generated at the first `up` (openssl), and one user, `kairos`, known to PLAIN and
 * to both SCRAM mechanisms. Clients trust `caFile` and log in with `username` and the password in
 * `passwordFile`.
 */
export interface KafkaSecurityFiles {
  readonly dir: string;
  /** The CA's certificate (PEM): what clients trust. */
  readonly caFile: string;
  /** The broker's private key and certificate chain (PEM), Kafka's PEM keystore. */
  readonly keystoreFile: string;
  readonly username: string;
  readonly password: string;
  readonly passwordFile: string;
}

export const SASL_USER = 'kairos';
export const SCRAM_MECHANISMS = ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;

/** The broker's certificate, signed by the stack's CA (in the same folder), as Kafka's PEM keystore. */
function generateBrokerKeystore(dir: string, host: string): void {
  const { keyFile, certFile } = issueCertificate({ caDir: dir, outDir: dir, name: 'broker', host });
  // Kafka's PEM keystore: the (PKCS#8, unencrypted) key, then the certificate chain.
  const chain = readFileSync(certFile, 'utf8') + readFileSync(resolve(dir, 'ca.pem'), 'utf8');
  writeFileSync(resolve(dir, 'broker.pem'), readFileSync(keyFile, 'utf8') + chain, { mode: 0o600 });
}

/** The listener's files, generated on first use and kept (a restart keeps its certificates and user). */
export function kafkaSecurityFiles(base: string, host: string): KafkaSecurityFiles {
  const dir = resolve(base, 'security');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const passwordFile = resolve(dir, 'kairos.password');
  if (!existsSync(passwordFile))
    writeFileSync(passwordFile, randomBytes(18).toString('base64url'), { mode: 0o600 });
  if (!existsSync(resolve(dir, 'broker.pem'))) generateBrokerKeystore(dir, host);
  return {
    dir,
    caFile: resolve(dir, 'ca.pem'),
    keystoreFile: resolve(dir, 'broker.pem'),
    username: SASL_USER,
    password: readFileSync(passwordFile, 'utf8').trim(),
    passwordFile,
  };
}

/**
 * server.properties lines of the SASL_SSL listener: PLAIN users inline, SCRAM users in the
 * metadata log, and OAUTHBEARER with Kafka's unsecured token validator (tokens signed with
 * `alg: none`, checked for `sub`, `iat` and `exp`): enough to exercise a client's token provider
 * hook locally; a real cluster validates tokens against its identity provider's keys.
 */
export function saslSslProperties(sec: KafkaSecurityFiles): string[] {
  const scram = 'org.apache.kafka.common.security.scram.ScramLoginModule required;';
  const oauth = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;';
  return [
    `sasl.enabled.mechanisms=PLAIN,${SCRAM_MECHANISMS.join(',')},OAUTHBEARER`,
    `listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=${oauth}`,
    `listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_${sec.username}="${sec.password}";`,
    ...SCRAM_MECHANISMS.map((m) => `listener.name.sasl_ssl.${m.toLowerCase()}.sasl.jaas.config=${scram}`),
    'listener.name.sasl_ssl.ssl.keystore.type=PEM',
    `listener.name.sasl_ssl.ssl.keystore.location=${sec.keystoreFile}`,
  ];
}

/** `--add-scram` arguments of the storage format: the user, for both SCRAM mechanisms. */
export function scramFormatArgs(sec: KafkaSecurityFiles): string[] {
  return SCRAM_MECHANISMS.flatMap((m) => [
    '--add-scram',
    `${m}=[name=${sec.username},password=${sec.password}]`,
  ]);
}

/**
 * ConfigCommand arguments, one invocation per mechanism (Kafka refuses two credentials of a user in
 * one request), that add the SCRAM user to a cluster formatted before the listener existed.
 */
export function scramAlterArgs(sec: KafkaSecurityFiles, bootstrap: string): string[][] {
  return SCRAM_MECHANISMS.map((m) => [
    '--bootstrap-server',
    bootstrap,
    '--alter',
    '--add-config',
    `${m}=[password=${sec.password}]`,
    '--entity-type',
    'users',
    '--entity-name',
    sec.username,
  ]);
}

/** An unsecured (`alg: none`) token the local listener accepts for OAUTHBEARER, valid `ttlMs`. */
export function unsecuredOAuthToken(subject: string, ttlMs = 3_600_000, nowMs = Date.now()): string {
  const part = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const iat = Math.floor(nowMs / 1000);
  return `${part({ alg: 'none' })}.${part({ sub: subject, iat, exp: iat + Math.ceil(ttlMs / 1000) })}.`;
}
