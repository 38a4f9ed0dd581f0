import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The certificate (PEM) of a CA of its own, which signed nothing the local stack serves. */
export function otherCaPem(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kairos-other-ca-'));
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=Other CA'].concat([
        '-keyout',
        join(dir, 'k.pem'),
        '-out',
        join(dir, 'ca.pem'),
      ]),
      { stdio: 'pipe' },
    );
    return readFileSync(join(dir, 'ca.pem'), 'utf8');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
