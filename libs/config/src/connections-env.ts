import { readFileSync } from 'node:fs';
import { isPem, type TlsOptions } from '@kairos/core';
import { SASL_MECHANISMS, type KafkaSecurity, type RegistryAuth, type SaslOptions } from '@kairos/kafka';
import { boolVar, EnvError } from './env-vars.js';

/** How the apps reach Kafka, the registry and Redis securely (PostgreSQL: see `KAIROS_PG_URL`). */
export interface ConnectionsEnv {
  /** KAIROS_KAFKA_SSL*, KAIROS_KAFKA_SASL_*. */
  readonly kafkaSecurity: KafkaSecurity;
  /** KAIROS_REGISTRY_USERNAME/PASSWORD or KAIROS_REGISTRY_BEARER_TOKEN(_FILE). */
  readonly registryAuth: RegistryAuth | undefined;
  /** KAIROS_REGISTRY_CA_FILE, KAIROS_REGISTRY_CERT_FILE, KAIROS_REGISTRY_KEY_FILE. */
  readonly registryTls: TlsOptions | undefined;
  /** KAIROS_REDIS_TLS_CA_FILE, …_CERT_FILE, …_KEY_FILE (TLS itself: a `rediss://` URL). */
  readonly redisTls: TlsOptions | undefined;
}

/** The contents of the file a variable names, or undefined when unset; an unreadable file is an EnvError. */
function fileVar(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const path = env[name];
  if (path === undefined || path === '') return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new EnvError(
      `${name}=${path} cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
}

/** A PEM file's contents (certificates, keys), or undefined when unset. */
function pemFile(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const text = fileVar(env, name);
  if (text !== undefined && !isPem(text))
    throw new EnvError(`${name}=${env[name]} is not a PEM file (no -----BEGIN …----- line)`);
  return text;
}

/** A secret given inline (`NAME`) or as a file (`NAME_FILE`, e.g. a mounted secret); not both. */
function secretVar(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const inline = env[name];
  const file = fileVar(env, `${name}_FILE`);
  if (inline !== undefined && inline !== '' && file !== undefined)
    throw new EnvError(`set ${name} or ${name}_FILE, not both`);
  return inline !== undefined && inline !== '' ? inline : file?.trim();
}

/** TLS material from `<prefix>_CA_FILE`, `_CERT_FILE`, `_KEY_FILE` (+ `_KEY_PASSWORD`, `_SERVERNAME`). */
function tlsFiles(env: NodeJS.ProcessEnv, prefix: string): TlsOptions | undefined {
  const ca = pemFile(env, `${prefix}_CA_FILE`);
  const cert = pemFile(env, `${prefix}_CERT_FILE`);
  const key = pemFile(env, `${prefix}_KEY_FILE`);
  const passphrase = secretVar(env, `${prefix}_KEY_PASSWORD`);
  const servername = env[`${prefix}_SERVERNAME`] || undefined;
  if ((cert === undefined) !== (key === undefined))
    throw new EnvError(
      `${prefix}_CERT_FILE and ${prefix}_KEY_FILE go together (mutual TLS): set both or neither`,
    );
  const tls = { ca, cert, key, passphrase, servername };
  if (Object.values(tls).every((v) => v === undefined)) return undefined;
  return Object.fromEntries(Object.entries(tls).filter(([, v]) => v !== undefined));
}

function kafkaSasl(env: NodeJS.ProcessEnv): SaslOptions | undefined {
  const raw = env.KAIROS_KAFKA_SASL_MECHANISM;
  if (raw === undefined || raw === '') return undefined;
  const mechanism = raw.toLowerCase();
  if (!(SASL_MECHANISMS as readonly string[]).includes(mechanism))
    throw new EnvError(`KAIROS_KAFKA_SASL_MECHANISM=${raw} must be one of ${SASL_MECHANISMS.join(', ')}`);
  if (mechanism === 'oauthbearer') {
    const tokenFile = env.KAIROS_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE;
    if (!tokenFile)
      throw new EnvError(
        'KAIROS_KAFKA_SASL_MECHANISM=oauthbearer needs KAIROS_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE',
      );
    fileVar(env, 'KAIROS_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE'); // readable now, or fail at start
    // Read at every (re)authentication, so a sidecar that rotates the file rotates the token.
    const provider = () =>
      Promise.resolve({ value: fileVar(env, 'KAIROS_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE')?.trim() ?? '' });
    return { mechanism: 'oauthbearer', oauthBearerProvider: provider };
  }
  const username = env.KAIROS_KAFKA_SASL_USERNAME;
  const password = secretVar(env, 'KAIROS_KAFKA_SASL_PASSWORD');
  if (!username || !password)
    throw new EnvError(
      `KAIROS_KAFKA_SASL_MECHANISM=${raw} needs KAIROS_KAFKA_SASL_USERNAME and KAIROS_KAFKA_SASL_PASSWORD (or _PASSWORD_FILE)`,
    );
  return { mechanism: mechanism as 'plain' | 'scram-sha-256' | 'scram-sha-512', username, password };
}

function kafkaSecurity(env: NodeJS.ProcessEnv): KafkaSecurity {
  const files = tlsFiles(env, 'KAIROS_KAFKA_SSL');
  const rejectUnauthorized = boolVar(env, 'KAIROS_KAFKA_SSL_REJECT_UNAUTHORIZED', true);
  // TLS files imply TLS; KAIROS_KAFKA_SSL=true alone means TLS with the system's CAs.
  const on = boolVar(env, 'KAIROS_KAFKA_SSL', files !== undefined);
  if (!on && files !== undefined)
    throw new EnvError(
      'KAIROS_KAFKA_SSL=false but KAIROS_KAFKA_SSL_* files are set: remove one or the other',
    );
  const sasl = kafkaSasl(env);
  return {
    ...(on ? { ssl: { ...files, ...(rejectUnauthorized ? {} : { rejectUnauthorized: false }) } } : {}),
    ...(sasl ? { sasl } : {}),
  };
}

function registryAuth(env: NodeJS.ProcessEnv): RegistryAuth | undefined {
  const username = env.KAIROS_REGISTRY_USERNAME;
  const password = secretVar(env, 'KAIROS_REGISTRY_PASSWORD');
  const bearerToken = secretVar(env, 'KAIROS_REGISTRY_BEARER_TOKEN');
  if (bearerToken !== undefined && (username || password))
    throw new EnvError('set KAIROS_REGISTRY_BEARER_TOKEN or KAIROS_REGISTRY_USERNAME/PASSWORD, not both');
  if (bearerToken !== undefined) return { bearerToken };
  if (!username && !password) return undefined;
  if (!username || password === undefined)
    throw new EnvError('KAIROS_REGISTRY_USERNAME and KAIROS_REGISTRY_PASSWORD go together');
  return { username, password };
}

/** Reads the connection security settings; a missing file or a half-set pair is an EnvError. */
export function connectionsEnv(env: NodeJS.ProcessEnv = process.env): ConnectionsEnv {
  return {
    kafkaSecurity: kafkaSecurity(env),
    registryAuth: registryAuth(env),
    registryTls: tlsFiles(env, 'KAIROS_REGISTRY'),
    redisTls: tlsFiles(env, 'KAIROS_REDIS_TLS'),
  };
}
