import { HotSet, Leases } from '@kairos/redis';
import { Redis } from 'ioredis';
import { measured, type Measurement, type Workload } from '../workload.js';

const LEASE_MS = 5000; // the SDK's default leaseMs
const HEARTBEAT_MS = Math.floor(LEASE_MS / 3); // its default heartbeatMs

/** Redis's own time per call of a script command (INFO commandstats), µs. */
async function usecPerEvalsha(redis: Redis): Promise<{ calls: number; usec: number }> {
  const stats = await redis.info('commandstats');
  const m = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(stats);
  return { calls: Number(m?.[1] ?? 0), usec: Number(m?.[2] ?? 0) };
}

/**
 * W8 (Kairos only): what a running attempt costs while it runs. N attempts are claimed, then all
 * renewed R times, as their heartbeats would (one renewal per attempt per heartbeat interval).
 * Reported: renewals/s one client sustains, Redis µs per renewal, and from those the overhead per
 * running job at the default heartbeat, leaseMs / 3 (Redis µs per second, bytes of lease state).
 */
export const leases: Workload = {
  id: 'w8',
  aliases: ['leases'],
  title: 'W8 lease heartbeats',
  only: ['kairos'],
  async run({ env, size, cpuRoots }) {
    const n = size === 'full' ? 10_000 : 1_000;
    const rounds = size === 'full' ? 10 : 3;
    const prefix = `b${env.namespace}.`;
    const redis = new Redis(env.redisUrl, { maxRetriesPerRequest: 3 });
    try {
      const leases = new Leases(redis, { keyPrefix: prefix });
      // The partitions as an owner leaves them: epoch 1, attempts restored (else claims wait).
      const hot = new HotSet(redis, { keyPrefix: prefix });
      for (let shard = 0; shard < 8; shard++) {
        await hot.setEpoch(shard, 1);
        await hot.restoreAttempts(shard, 1, []);
      }
      const refs = Array.from({ length: n }, (_, i) => ({
        jobId: `w8-${i}`,
        shard: i % 8,
        fence: 1,
        version: 1,
        epoch: 1,
      }));
      const before = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);
      for (let i = 0; i < refs.length; i += 500) {
        await Promise.all(refs.slice(i, i + 500).map((r) => leases.claim(r, 'bench-worker', LEASE_MS)));
      }
      const after = Number(/used_memory:(\d+)/.exec(await redis.info('memory'))?.[1] ?? 0);
      const s0 = await usecPerEvalsha(redis);
      const m = await measured(cpuRoots, async () => {
        for (let r = 0; r < rounds; r++) {
          for (let i = 0; i < refs.length; i += 500) {
            const outcomes = await Promise.all(
              refs.slice(i, i + 500).map((ref) => leases.renew(ref, 'bench-worker', LEASE_MS)),
            );
            if (outcomes.some((o) => o !== 'OK')) throw new Error('a renewal was refused');
          }
        }
      });
      const s1 = await usecPerEvalsha(redis);
      const renewals = n * rounds;
      const usecPerRenewal = (s1.usec - s0.usec) / Math.max(1, s1.calls - s0.calls);
      const row = (metric: string, unit: string, value: number): Measurement => ({
        workload: 'W8',
        variant: `${n} running attempts`,
        system: 'kairos',
        metric,
        unit,
        value,
        cpuPer1000: (m.cpu / renewals) * 1000,
      });
      await Promise.all(refs.map((r) => leases.release(r, 'bench-worker', true)));
      for (let i = 0; i < refs.length; i += 500) {
        await redis.del(...refs.slice(i, i + 500).map((r) => `${prefix}kairos:{${r.shard}}:a:${r.jobId}`));
      }
      return [
        row('renewals per second', 'renewals/s', renewals / m.seconds),
        row('Redis time per renewal', 'µs', usecPerRenewal),
        row('Redis time per running job', 'µs/s', (usecPerRenewal * 1000) / HEARTBEAT_MS),
        row('lease state per running job', 'bytes', (after - before) / n),
      ];
    } finally {
      redis.disconnect();
    }
  },
};
