import { resolve } from 'node:path';
import { crash, stackConfigFromEnv, up, type StackConfig } from '@kairos/ops';
import { eventually, RESOURCE_CLASSES } from '../support/pipeline.js';
import { CANARY_TENANT } from '@kairos/core';
import type { Fault, FaultContext } from './faults.js';

const ROOT = resolve(import.meta.dirname, '..', '..');

type StackService = 'kafka' | 'connect' | 'postgres';

/** The local stack's configuration, as its global setup read it (same environment). */
function stackConfig(): StackConfig {
  return stackConfigFromEnv(ROOT);
}

/** Whether the namespace's outbox connector and its task run (Connect answers, nothing FAILED). */
async function connectorRunning(ctx: FaultContext): Promise<boolean> {
  const name = `${ctx.ns.prefix}outbox-${ctx.ns.id}`;
  const res = await fetch(
    `${ctx.ns.services.connectUrl}/connectors/${encodeURIComponent(name)}/status`,
  ).catch(() => undefined);
  if (!res?.ok) return false;
  const s = (await res.json()) as { connector: { state: string }; tasks: { state: string }[] };
  return s.connector.state === 'RUNNING' && s.tasks.length > 0 && s.tasks.every((t) => t.state === 'RUNNING');
}

/**
 * Whether a canary of every class created at or after `sinceMs` succeeded: the whole path works
 * again (PostgreSQL may still be down: then not yet).
 */
async function canariesSince(ctx: FaultContext, sinceMs: number): Promise<boolean> {
  const { rows } = await ctx.d.pool.query<{ n: number }>(
    `SELECT count(DISTINCT resource_class)::int AS n FROM jobs
     WHERE tenant_id = $1 AND state = 'SUCCEEDED' AND created_at >= $2`,
    [CANARY_TENANT, new Date(sinceMs)],
  );
  return rows[0]?.n === RESOURCE_CLASSES.length;
}

/**
 * A service of the local stack crashed whole (SIGKILL of its process group) and started again,
 * as its supervisor would; the apps reconnect by themselves. Back when it is healthy, the
 * namespace's outbox connector runs again and a canary of every class created since the crash
 * succeeded, so the next fault's window does not start in this one's recovery (each row's
 * recovery time is its own).
 */
function crashAndRestart(name: string, service: StackService): Fault {
  return {
    name,
    shared: true,
    async inject(ctx) {
      const cfg = stackConfig();
      const atMs = Date.now();
      await crash(cfg, service);
      await up(cfg, (line) => console.log(`[chaos] ${line}`));
      await eventually('the outbox connector to run again', () => connectorRunning(ctx), 120_000);
      await eventually(
        'a canary of every class to succeed',
        () => canariesSince(ctx, atMs).catch(() => false),
        120_000,
      );
    },
  };
}

/** Faults of the stack every suite shares: only when the chaos project has it to itself. */
export const STACK_FAULTS: readonly Fault[] = [
  crashAndRestart('Kafka broker SIGKILL and restart', 'kafka'),
  crashAndRestart('Kafka Connect SIGKILL and restart', 'connect'),
  crashAndRestart('PostgreSQL SIGKILL and restart', 'postgres'),
];
