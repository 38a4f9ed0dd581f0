import { checkTls, type TlsOptions } from '@kairos/core';
import type { KafkaConfig, SASLOptions } from 'kafkajs';

/** An OAUTHBEARER token, as the provider hook returns it. */
export interface OAuthBearerToken {
  /** The token sent to the broker (e.g. a JWT). */
  readonly value: string;
}

/** SASL authentication with the brokers. */
export type SaslOptions =
  | {
      readonly mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
      readonly username: string;
      readonly password: string;
    }
  | {
      readonly mechanism: 'oauthbearer';
      /** Called at every (re)authentication: return a fresh token from your identity provider. */
      readonly oauthBearerProvider: () => Promise<OAuthBearerToken>;
    };

/** How a Kafka client secures its connections. Default: plaintext, no authentication. */
export interface KafkaSecurity {
  /** TLS to the brokers: true (system CAs) or TLS options. Default: off. */
  readonly ssl?: boolean | TlsOptions;
  /** SASL authentication; usually with `ssl` (SASL_SSL). Default: none. */
  readonly sasl?: SaslOptions;
}

/** The SASL mechanisms Kairos's Kafka clients speak. */
export const SASL_MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512', 'oauthbearer'] as const;

function checkSasl(sasl: SaslOptions): SASLOptions {
  const mechanism = (sasl as { mechanism?: unknown }).mechanism;
  if (!SASL_MECHANISMS.includes(mechanism as (typeof SASL_MECHANISMS)[number]))
    throw new RangeError(
      `sasl.mechanism must be one of ${SASL_MECHANISMS.join(', ')}, got ${String(mechanism)}`,
    );
  if (sasl.mechanism === 'oauthbearer') {
    if (typeof sasl.oauthBearerProvider !== 'function')
      throw new RangeError('sasl.oauthBearerProvider must be a function returning { value: token }');
    return { mechanism: 'oauthbearer', oauthBearerProvider: sasl.oauthBearerProvider };
  }
  if (typeof sasl.username !== 'string' || sasl.username === '')
    throw new RangeError(`sasl.username must be a non-empty string for ${sasl.mechanism}`);
  if (typeof sasl.password !== 'string' || sasl.password === '')
    throw new RangeError(`sasl.password must be a non-empty string for ${sasl.mechanism}`);
  return { mechanism: sasl.mechanism, username: sasl.username, password: sasl.password };
}

/** Validates the security options into KafkaJS's; every problem is a RangeError naming the option. */
export function kafkaSecurityConfig(security: KafkaSecurity): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  const tls = checkTls('ssl', security.ssl);
  return {
    ...(tls ? { ssl: { ...tls } } : {}),
    ...(security.sasl !== undefined ? { sasl: checkSasl(security.sasl) } : {}),
  };
}

/** A one-line description of how a client connects, for errors: brokers, TLS, SASL mechanism, user. */
export function describeKafkaConnection(brokers: readonly string[], security: KafkaSecurity): string {
  const tls = security.ssl ? 'TLS' : 'plaintext';
  const sasl = security.sasl
    ? `SASL ${security.sasl.mechanism.toUpperCase()}${'username' in security.sasl ? ` as "${security.sasl.username}"` : ''}`
    : 'no SASL';
  return `brokers ${brokers.join(',')} (${tls}, ${sasl})`;
}
