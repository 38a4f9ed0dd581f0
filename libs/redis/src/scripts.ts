import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { RedisClient } from './client.js';

/**
 * Every atomic state change is one Lua file in ./scripts with its KEYS/ARGV documented at the
 * top. This table says how many KEYS each takes (undefined: a variable number, passed by the
 * caller as the first argument); ioredis runs them with EVALSHA and falls back to EVAL after a
 * Redis restart emptied the script cache.
 */
const SCRIPTS = {
  serverTime: { file: 'server-time.lua', numberOfKeys: 0 },
  kairosApplyEvents: { file: 'apply-events.lua', numberOfKeys: undefined },
  kairosPopDue: { file: 'pop-due.lua', numberOfKeys: 3 },
  kairosTrim: { file: 'trim.lua', numberOfKeys: 3 },
  kairosLeaseClaim: { file: 'lease-claim.lua', numberOfKeys: undefined },
  kairosLeaseRenew: { file: 'lease-renew.lua', numberOfKeys: undefined },
  kairosLeaseRelease: { file: 'lease-release.lua', numberOfKeys: undefined },
  kairosLeaseReap: { file: 'lease-reap.lua', numberOfKeys: 3 },
  kairosLeaseForget: { file: 'lease-forget.lua', numberOfKeys: 1 },
  kairosHotStats: { file: 'hot-stats.lua', numberOfKeys: 3 },
  kairosClearPartition: { file: 'clear-partition.lua', numberOfKeys: 4 },
  kairosAck: { file: 'ack.lua', numberOfKeys: undefined },
  kairosSetEpoch: { file: 'set-epoch.lua', numberOfKeys: 1 },
  kairosRestoreAttempts: { file: 'restore-attempts.lua', numberOfKeys: undefined },
  kairosRateTake: { file: 'rate-take.lua', numberOfKeys: undefined },
  kairosRateRefund: { file: 'rate-refund.lua', numberOfKeys: undefined },
} as const;

export type ScriptName = keyof typeof SCRIPTS;

const SCRIPT_DIR = resolve(import.meta.dirname, 'scripts');

/** A line `-- @include <file>` stands for that file of ./scripts/includes (Lua shared by scripts). */
const INCLUDE = /^-- @include (\S+)$/gm;

export function scriptSource(name: ScriptName): string {
  return readFileSync(resolve(SCRIPT_DIR, SCRIPTS[name].file), 'utf8').replace(INCLUDE, (_, file: string) =>
    readFileSync(resolve(SCRIPT_DIR, 'includes', file), 'utf8'),
  );
}

type Arg = string | number;

export interface KairosScripts {
  serverTime(): Promise<number>;
  /** numberOfKeys, then KEYS, then ARGV. */
  kairosApplyEvents(numberOfKeys: number, ...args: Arg[]): Promise<number[]>;
  kairosPopDue(...args: Arg[]): Promise<(string | number)[]>;
  /** numberOfKeys, then KEYS, then ARGV (one call per partition; see Leases). */
  kairosLeaseClaim(numberOfKeys: number, ...args: Arg[]): Promise<unknown>;
  kairosLeaseRenew(numberOfKeys: number, ...args: Arg[]): Promise<unknown>;
  kairosLeaseRelease(numberOfKeys: number, ...args: Arg[]): Promise<unknown>;
  /** numberOfKeys, then KEYS, then ARGV. */
  kairosAck(numberOfKeys: number, ...args: Arg[]): Promise<number>;
  kairosTrim(...args: Arg[]): Promise<number>;
  kairosLeaseReap(...args: Arg[]): Promise<(string | number)[]>;
  kairosLeaseForget(...args: Arg[]): Promise<number>;
  kairosHotStats(...args: Arg[]): Promise<number[]>;
  kairosClearPartition(...args: Arg[]): Promise<number>;
  kairosSetEpoch(...args: Arg[]): Promise<number>;
  /** numberOfKeys, then KEYS, then ARGV. */
  kairosRestoreAttempts(numberOfKeys: number, ...args: Arg[]): Promise<number>;
  /** numberOfKeys, then KEYS, then ARGV. */
  kairosRateTake(numberOfKeys: number, ...args: Arg[]): Promise<number[]>;
  /** numberOfKeys, then KEYS, then ARGV. */
  kairosRateRefund(numberOfKeys: number, ...args: Arg[]): Promise<number>;
}

/** Scripts queued on a pipeline (their replies come with exec()); numberOfKeys, then KEYS, then ARGV. */
export interface KairosPipeline {
  kairosLeaseClaim(numberOfKeys: number, ...args: Arg[]): KairosPipeline;
  kairosLeaseRenew(numberOfKeys: number, ...args: Arg[]): KairosPipeline;
  kairosLeaseRelease(numberOfKeys: number, ...args: Arg[]): KairosPipeline;
  exec(): Promise<[error: Error | null, reply: unknown][] | null>;
}

/** A pipeline on a client with the Kairos scripts defined (ioredis gives pipelines its scripts). */
export function kairosPipeline(redis: RedisClient & KairosScripts): KairosPipeline {
  return redis.pipeline() as unknown as KairosPipeline;
}

/** Defines every Kairos script as a command on the client (idempotent per client). */
export function withScripts(redis: RedisClient): RedisClient & KairosScripts {
  for (const [name, def] of Object.entries(SCRIPTS)) {
    if (!(name in redis)) {
      redis.defineCommand(name, { numberOfKeys: def.numberOfKeys, lua: scriptSource(name as ScriptName) });
    }
  }
  return redis as RedisClient & KairosScripts;
}
