import { Agent } from 'node:https';
import { checkTls, type TlsOptions } from '@kairos/core';
// The registry client alone, not the package's index: the index loads every serde, rule executor
// and cloud KMS driver (AWS, Azure, GCP, Vault) at import, none of which Kairos uses, and an SDK
// bundle built from it would carry them all.
import {
  SchemaRegistryClient,
  type Client,
  type Compatibility,
} from '@confluentinc/schemaregistry/dist/schemaregistry-client.js';
import { RestError } from '@confluentinc/schemaregistry/dist/rest-error.js';

export {
  Compatibility,
  type Client as RegistryClient,
} from '@confluentinc/schemaregistry/dist/schemaregistry-client.js';
export { RestError } from '@confluentinc/schemaregistry/dist/rest-error.js';

/** How to authenticate with the registry: HTTP basic (Confluent Cloud API keys too) or a bearer token. */
export type RegistryAuth =
  { readonly username: string; readonly password: string } | { readonly bearerToken: string };

export interface RegistryOptions {
  /** Base URL of a Confluent-compatible registry, e.g. Apicurio's `http://host:port/apis/ccompat/v7`. */
  readonly url: string;
  /** Per-request timeout in ms; a hung registry must not hang its callers. Default: 10,000. */
  readonly timeoutMs?: number;
  /** Credentials. Default: none. */
  readonly auth?: RegistryAuth;
  /** TLS of an https URL (a private CA, mutual TLS). Default: the system's CAs. */
  readonly tls?: TlsOptions;
  /** Extra headers on every request (e.g. Confluent Cloud's `target-sr-cluster`). Default: none. */
  readonly headers?: Readonly<Record<string, string>>;
}

function checkAuth(auth: RegistryAuth): Record<string, string> {
  if ('bearerToken' in auth) {
    if (typeof auth.bearerToken !== 'string' || auth.bearerToken === '')
      throw new RangeError('registry auth.bearerToken must be a non-empty string');
    return { Authorization: `Bearer ${auth.bearerToken}` };
  }
  if (typeof auth.username !== 'string' || auth.username === '' || typeof auth.password !== 'string')
    throw new RangeError('registry auth needs a non-empty username and a password, or a bearerToken');
  return { Authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` };
}

/** Validates the options (a RangeError names the bad one) and makes the registry client. */
export function createRegistryClient(options: RegistryOptions): Client {
  let url: URL;
  try {
    url = new URL(options.url);
  } catch {
    throw new RangeError(`registry url must be an http(s) URL, got ${String(options.url)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new RangeError(`registry url must be an http(s) URL, got ${options.url}`);
  const tls = checkTls('registry tls', options.tls);
  if (tls && url.protocol !== 'https:')
    throw new RangeError(`registry tls is set but the url ${options.url} is not https`);
  const headers = { ...options.headers, ...(options.auth ? checkAuth(options.auth) : {}) };
  return new SchemaRegistryClient({
    baseURLs: [options.url],
    createAxiosDefaults: {
      timeout: options.timeoutMs ?? 10_000,
      headers,
      ...(tls ? { httpsAgent: new Agent({ ...tls, keepAlive: true }) } : {}),
    },
  });
}

/**
 * Sets a subject's compatibility level, safe when several processes start at once. Apicurio
 * creates a subject's rule on the first update and answers a concurrent second creation with
 * 409 "rule already exists"; the rule then exists, so one more update sets it (or confirms it).
 */
export async function setCompatibility(client: Client, subject: string, level: Compatibility): Promise<void> {
  try {
    await client.updateConfig(subject, { compatibility: level });
  } catch (err) {
    if (!(err instanceof RestError) || err.status !== 409) throw err;
    await client.updateConfig(subject, { compatibility: level });
  }
}
