import { createPool } from '@kairos/db';
import { ensureLocalKey } from './api-keys.js';
import { startApp, stopApps, type AppProcess } from './apps.js';
import { bootstrap } from './bootstrap.js';
import { buildConsole } from './console-build.js';
import { serviceUrls, type StackConfig } from './config.js';
import { runDemo } from './demo.js';
import { formatStates } from './print.js';
import { down, up, type Log } from './stack.js';
import { waitFor } from './wait.js';

const APPS = ['api', 'delay-tier', 'tracker', 'ingest', 'worker-example'] as const;

/**
 * `npm start`: the stack, every app, and a small demo; then runs until Ctrl-C, which stops the
 * apps and, if this run started it, the stack.
 */
export async function start(cfg: StackConfig, log: Log, options: { demo: boolean; apiPort: number }) {
  const states = await up(cfg, log);
  // Ctrl-C stops only the services this run started, never ones that were already running.
  const startedHere = states.filter((s) => s.action === 'started').map((s) => s.name);
  await bootstrap(cfg, log);
  log(formatStates(states));
  const urls = serviceUrls(cfg);
  const apiKey = await localKey(urls.KAIROS_PG_URL ?? '', cfg.dataDir, log);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...urls,
    KAIROS_JOB_EVENT_PARTITIONS: String(cfg.jobEventPartitions),
    KAIROS_API_PORT: String(options.apiPort),
    KAIROS_LOG_LEVEL: process.env.KAIROS_LOG_LEVEL ?? 'info',
  };
  await buildConsole(cfg.root);
  const apps: AppProcess[] = APPS.map((name, i) => startApp(cfg.root, name, env, i));
  let stopping = false;
  const stopAll = async () => {
    if (stopping) return;
    stopping = true;
    log('stopping the apps…');
    await stopApps(apps);
    if (startedHere.length > 0) {
      log(`stopping the services this run started (${startedHere.join(', ')})…`);
      await down(cfg, log, startedHere);
    }
    process.exit(0);
  };
  process.once('SIGINT', () => void stopAll());
  process.once('SIGTERM', () => void stopAll());
  const apiUrl = `http://127.0.0.1:${options.apiPort}`;
  try {
    await waitFor(
      'api',
      async () => (await fetch(`${apiUrl}/healthz`, { signal: AbortSignal.timeout(1000) })).ok,
      {
        timeoutMs: 60_000,
        isDead: () => {
          const api = apps[0]?.child;
          return api && api.exitCode !== null ? `exit code ${api.exitCode}` : undefined;
        },
      },
    );
    log(
      `Kairos is up: API on ${apiUrl}, Kafka ${urls.KAIROS_KAFKA_BROKERS}, registry ${urls.KAIROS_REGISTRY_URL}`,
    );
    log(`API key (admin of every tenant, in ${cfg.dataDir}/api-key): ${apiKey}`);
    log(`  curl -H "Authorization: Bearer $(cat ${cfg.dataDir}/api-key)" ${apiUrl}/v1/whoami`);
    log(`Console: ${apiUrl}/console/ (log in with that key)`);
    if (options.demo) await runDemo(apiUrl, apiKey, log);
  } catch (err) {
    // Never leave app processes behind when start-up fails.
    await stopApps(apps);
    throw err;
  }
  log('running; press Ctrl-C to stop');
}

/** The local stack's admin key (made once, kept in the data folder; a new one after a reset). */
async function localKey(pgUrl: string, dataDir: string, log: Log): Promise<string> {
  const pool = createPool({ connectionString: pgUrl, max: 1, applicationName: 'kairos-start' });
  try {
    const { key, created } = await ensureLocalKey(pool, dataDir);
    if (created) log('created a local admin API key');
    return key;
  } finally {
    await pool.end();
  }
}
