/**
 * TLS of a connection to Kafka, the schema registry, PostgreSQL or Redis: the PEM material (not
 * file paths; entry points read the files) and the checks. Every field is optional; an empty
 * object means TLS with the system's CAs. The fields are Node's own (`tls.connect`), so the options
 * go to KafkaJS, ioredis, node-postgres and https agents as they are.
 */
export interface TlsOptions {
  /** CA certificate(s) to trust, PEM. Default: the system's CAs. */
  readonly ca?: string | Buffer | (string | Buffer)[];
  /** Client certificate chain, PEM, for mutual TLS. Requires `key`. */
  readonly cert?: string | Buffer;
  /** Client private key, PEM. Requires `cert`. */
  readonly key?: string | Buffer;
  /** Passphrase of an encrypted `key`. */
  readonly passphrase?: string;
  /** Server name for SNI and the certificate's host check, when it differs from the host dialled. */
  readonly servername?: string;
  /** Refuse a server whose certificate does not verify. Default: true. */
  readonly rejectUnauthorized?: boolean;
}

const PEM = /-----BEGIN [A-Z0-9 ]+-----/;

/** True when the text has a PEM block header (a certificate or a key, not a path to one). */
export function isPem(text: string): boolean {
  return PEM.test(text);
}

/** Where the text fails to be PEM, an error that says what was given instead (a path, usually). */
function checkPem(name: string, value: unknown): void {
  if (value instanceof Uint8Array) {
    if (!PEM.test(new TextDecoder().decode(value.subarray(0, 4096))))
      throw new RangeError(`${name} must be PEM (-----BEGIN …-----); the bytes given have no PEM header`);
    return;
  }
  if (typeof value !== 'string')
    throw new RangeError(`${name} must be PEM text or bytes, got ${typeof value}`);
  if (!PEM.test(value)) {
    const hint = /^[./~]|^[A-Za-z]:\\/.test(value)
      ? ' (it looks like a file path: pass the file’s contents)'
      : '';
    throw new RangeError(`${name} must be PEM text (-----BEGIN …-----)${hint}`);
  }
}

/**
 * Validates TLS options named `name` in errors (e.g. `ssl`, `registry.tls`): `true` means TLS with
 * the system's CAs, `false` or undefined no TLS. Returns the options to use, or undefined.
 */
export function checkTls(name: string, tls: TlsOptions | boolean | undefined): TlsOptions | undefined {
  if (tls === undefined || tls === false) return undefined;
  if (tls === true) return {};
  if (typeof tls !== 'object' || tls === null)
    throw new RangeError(`${name} must be true, false or an object of TLS options, got ${String(tls)}`);
  const cas = tls.ca === undefined ? [] : Array.isArray(tls.ca) ? tls.ca : [tls.ca];
  cas.forEach((ca, i) => checkPem(cas.length > 1 ? `${name}.ca[${i}]` : `${name}.ca`, ca));
  if (tls.cert !== undefined) checkPem(`${name}.cert`, tls.cert);
  if (tls.key !== undefined) checkPem(`${name}.key`, tls.key);
  if ((tls.cert === undefined) !== (tls.key === undefined))
    throw new RangeError(`${name}.cert and ${name}.key go together (mutual TLS): set both or neither`);
  if (tls.rejectUnauthorized !== undefined && typeof tls.rejectUnauthorized !== 'boolean')
    throw new RangeError(`${name}.rejectUnauthorized must be a boolean`);
  if (tls.servername !== undefined && (typeof tls.servername !== 'string' || tls.servername === ''))
    throw new RangeError(`${name}.servername must be a non-empty host name`);
  return tls;
}
