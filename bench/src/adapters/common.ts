import pg from 'pg';
import type { BenchEnv } from '../adapter.js';

/** What a peer's worker runs for each job: the job's key, resolved when the job is done. */
export type JobHandler = (key: string) => void | Promise<void>;

/** Starts a peer's worker; the result stops it, waiting for running handlers. */
export type StartWorker = (
  env: BenchEnv,
  concurrency: number,
  handler: JobHandler,
) => Promise<() => Promise<void>>;

export const peerNames = ['bullmq', 'pg-boss', 'graphile-worker'] as const;
export type PeerName = (typeof peerNames)[number];

/** Payloads are `{ key }`; anything else is a bug in the adapter, not a job to skip. */
export function keyOf(payload: unknown): string {
  const key = (payload as { key?: unknown } | null)?.key;
  if (typeof key !== 'string') throw new Error(`job payload without a key: ${JSON.stringify(payload)}`);
  return key;
}

export function requireEnv(env: BenchEnv | undefined): BenchEnv {
  if (!env) throw new Error('adapter used before setup()');
  return env;
}

/** Command line of worker-process.ts running this peer, for the harness to spawn with this Node. */
export function workerProcessCommand(
  name: PeerName,
  env: BenchEnv,
  concurrency: number,
  handlerMs: number,
): { args: string[]; env: Record<string, string> } {
  return {
    args: ['--conditions=kairos-source', '--import', 'tsx', `${import.meta.dirname}/worker-process.ts`],
    env: {
      BENCH_ADAPTER: name,
      BENCH_ENV: JSON.stringify(env),
      BENCH_CONCURRENCY: String(concurrency),
      BENCH_HANDLER_MS: String(handlerMs),
    },
  };
}

export async function dropSchema(pgUrl: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${client.escapeIdentifier(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}

/** Peers' background errors go to stderr: stdout of a worker process carries only START/DONE lines. */
export function logError(system: string, err: unknown): void {
  // pg-boss emits plain objects copied from its errors, so look for a stack rather than an Error.
  const { stack, message } = (typeof err === 'object' && err !== null ? err : {}) as {
    stack?: unknown;
    message?: unknown;
  };
  const text = typeof stack === 'string' ? stack : typeof message === 'string' ? message : String(err);
  process.stderr.write(`[${system}] ${text}\n`);
}
