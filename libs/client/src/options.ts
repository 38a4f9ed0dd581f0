import { randomBytes } from 'node:crypto';
import { checkTls, type TlsOptions } from '@kairos/core';
import type { RegistryAuth, SaslOptions } from '@kairos/kafka';

/** Minimal logger interface (pino, console-like adapters and the like fit it). */
export interface ClientLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface KairosClientOptions {
  /** Kafka bootstrap brokers. Required. */
  readonly brokers: readonly string[];
  /** Confluent-compatible Schema Registry URL (Apicurio: `.../apis/ccompat/v7`). Required. */
  readonly registryUrl: string;
  /** TLS to the brokers: true (the system's CAs) or TLS options (`ca`, `cert`, `key`, `servername`…, PEM text). Default: off. */
  readonly ssl?: boolean | TlsOptions;
  /**
   * SASL with the brokers: `{ mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512', username,
   * password }` or `{ mechanism: 'oauthbearer', oauthBearerProvider }`. Default: none.
   */
  readonly sasl?: SaslOptions;
  /** Registry credentials: `{ username, password }` (basic; Confluent Cloud API keys) or `{ bearerToken }`. Default: none. */
  readonly registryAuth?: RegistryAuth;
  /** TLS of an https registry URL (a private CA, mutual TLS). Default: the system's CAs. */
  readonly registryTls?: TlsOptions;
  /** Tenant of every request that names none. Default: none (each request must name its tenant). */
  readonly tenant?: string;
  /** Prefix of every topic name (matches the deployment's). Default: ''. */
  readonly topicPrefix?: string;
  /** Kafka client id. Default: `kairos-client`. */
  readonly clientId?: string;
  /**
   * Follow the reply and rejection topics so awaitOutcome() can answer. Off by default: it reads
   * every tenant's answers, which a producer that does not wait for them need not pay for.
   */
  readonly outcomes?: boolean;
  /** How long awaitOutcome() waits by default, ms, counted from the send. Default: 30,000. */
  readonly outcomeTimeoutMs?: number;
  /** Consumer group of the outcome listener (no offsets are committed). Default: unique per client. */
  readonly outcomeGroupId?: string;
  /** Default: a logger that drops everything. */
  readonly logger?: ClientLogger;
}

export interface CompiledClientOptions {
  readonly brokers: readonly string[];
  readonly registryUrl: string;
  readonly ssl: boolean | TlsOptions | undefined;
  readonly sasl: SaslOptions | undefined;
  readonly registryAuth: RegistryAuth | undefined;
  readonly registryTls: TlsOptions | undefined;
  readonly tenant: string | undefined;
  readonly topicPrefix: string;
  readonly clientId: string;
  readonly outcomes: boolean;
  readonly outcomeTimeoutMs: number;
  readonly outcomeGroupId: string;
  readonly logger: ClientLogger;
}

const silent: ClientLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** Validates options into their compiled form; every problem is a RangeError naming the option. */
export function compileClientOptions(o: KairosClientOptions): CompiledClientOptions {
  if (!Array.isArray(o.brokers) || o.brokers.length === 0)
    throw new RangeError('brokers must name at least one broker');
  if (typeof o.registryUrl !== 'string' || !/^https?:\/\//.test(o.registryUrl)) {
    throw new RangeError(`registryUrl must be an http(s) URL, got ${String(o.registryUrl)}`);
  }
  if (o.tenant !== undefined && (typeof o.tenant !== 'string' || o.tenant === '')) {
    throw new RangeError('tenant must be a non-empty string');
  }
  const timeout = o.outcomeTimeoutMs ?? 30_000;
  if (!Number.isInteger(timeout) || timeout < 1) {
    throw new RangeError(`outcomeTimeoutMs must be a positive integer, got ${timeout}`);
  }
  const prefix = o.topicPrefix ?? '';
  return {
    brokers: o.brokers,
    registryUrl: o.registryUrl,
    ssl: o.ssl,
    sasl: o.sasl,
    registryAuth: o.registryAuth,
    registryTls: checkTls('registryTls', o.registryTls),
    tenant: o.tenant,
    topicPrefix: prefix,
    clientId: o.clientId ?? 'kairos-client',
    outcomes: o.outcomes ?? false,
    outcomeTimeoutMs: timeout,
    outcomeGroupId: o.outcomeGroupId ?? `${prefix}kairos-client-outcomes-${randomBytes(6).toString('hex')}`,
    logger: o.logger ?? silent,
  };
}
