import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPool } from '@kairos/db';
import { expect, inject, test } from 'vitest';
import { createJobsOverHttp, startDeployment, waitAllSucceeded } from '../support/deployment.js';
import { useNamespace } from '../support/namespace.js';
import { otherCaPem } from '../support/other-ca.js';
import { eventually } from '../support/pipeline.js';

const tlsUrl = inject('services').pgTlsUrl;

// The local stack's PostgreSQL serves TLS; services given by KAIROS_* variables may not.
test.skipIf(!tlsUrl)(
  'the apps reach PostgreSQL over TLS (sslmode=verify-full against the CA) and run a job',
  async () => {
    const ns = await useNamespace('pg-tls');
    const apps = ['api', 'delay-tier', 'tracker'] as const;
    const d = await startDeployment(ns, {
      apps: [...apps, 'worker-example'],
      env: { KAIROS_PG_URL: tlsUrl! }, // as in production: only the URL changes
    });
    const jobs = await createJobsOverHttp(d, [
      { tenant: 'acme', type: 'demo.hello', resource_class: 'default', payload: { name: 'tls' } },
    ]);
    await waitAllSucceeded(
      d,
      jobs.map((j) => j.id),
      60_000,
    );
    // Every app's connections are encrypted (no other test connects over TLS).
    await eventually('each app to hold a TLS connection', async () => {
      const { rows } = await d.pool.query<{ app: string }>(
        `SELECT DISTINCT a.application_name AS app FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)
          WHERE s.ssl AND a.application_name = ANY($1::text[])`,
        [apps.map((a) => `kairos-${a}`)],
      );
      return rows.length === apps.length;
    });
  },
  180_000,
);

test.skipIf(!tlsUrl)('a CA that did not sign the server certificate is refused', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kairos-pg-ca-'));
  try {
    writeFileSync(join(dir, 'ca.pem'), otherCaPem());
    const url = new URL(tlsUrl!);
    url.searchParams.set('sslrootcert', join(dir, 'ca.pem'));
    const pool = createPool({ connectionString: url.toString(), max: 1 });
    try {
      await expect(pool.query('SELECT 1')).rejects.toThrow(
        /unable to verify the first certificate|self[- ]signed certificate/,
      );
    } finally {
      await pool.end();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
