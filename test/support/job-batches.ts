import type { CreateResult } from '@kairos/commands';
import { RESOURCE_CLASSES, eventually, type Pipeline } from './pipeline.js';

/**
 * Creates `n` jobs of `type` spread over the test classes and four tenants, the i-th due at
 * dueAt(i), in batches of 250 through the commands; returns what each create returned.
 */
export async function createJobBatch(
  p: Pipeline,
  type: string,
  n: number,
  dueAt: (i: number) => number,
): Promise<CreateResult[]> {
  const out: CreateResult[] = [];
  for (let from = 0; from < n; from += 250) {
    out.push(
      ...(await p.commands.createJobs(
        Array.from({ length: Math.min(250, n - from) }, (_, k) => ({
          tenant: `t${(from + k) % 4}`,
          type,
          resource_class: RESOURCE_CLASSES[(from + k) % RESOURCE_CLASSES.length] ?? 'default',
          payload: {},
          due_at: new Date(dueAt(from + k)).toISOString(),
        })),
      )),
    );
  }
  return out;
}

/** Waits (bounded) until every one of these jobs is SUCCEEDED in PostgreSQL. */
export async function allSucceeded(p: Pipeline, ids: readonly string[], timeoutMs = 120_000): Promise<void> {
  await eventually(
    `all ${ids.length} jobs to succeed`,
    async () => {
      const { rows } = await p.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1::uuid[]) AND state = 'SUCCEEDED'`,
        [ids],
      );
      return rows[0]?.n === ids.length;
    },
    timeoutMs,
  );
}
