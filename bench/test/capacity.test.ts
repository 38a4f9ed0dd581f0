import { describe, expect, test } from 'vitest';
import type { PerJobCosts } from '../src/capacity/costs.js';
import { DEFAULT_DAY, simulateDay } from '../src/capacity/day.js';
import { ceilings, componentLoad, size } from '../src/capacity/model.js';

const costs: PerJobCosts = {
  cpuMs: { 'delay-tier': 0.2, postgres: 0.4, connect: 0.1, redis: 0.1, api: 0.1, tracker: 0.05, worker: 0.2 },
  redisCommands: 25,
  redisBytesPerHotJob: 650,
  walBytes: 6000,
  rowWrites: 7,
  kafkaBytes: 2300,
  source: 'test',
};

describe('capacity model', () => {
  test('cores are the jobs per second times CPU per job at 60 % utilisation, by the side each component works on', () => {
    const l = componentLoad({ created: 10_000, due: 0 }, costs);
    expect(l.cores.api).toBeCloseTo((10_000 * 0.1) / 1000 / 0.6);
    expect(l.cores['delay-tier']).toBe(0); // nothing falls due: the tier does no work
    expect(l.redisGB).toBeCloseTo((10_000 * 600 * 650) / 1e9);
    const d = componentLoad({ created: 0, due: 10_000 }, costs);
    expect(d.cores['delay-tier']).toBeCloseTo((10_000 * 0.2) / 1000 / 0.6);
    expect(d.cores.api).toBe(0);
  });

  test('every size grows with the load and never falls below a replicated minimum', () => {
    const small = size({ created: 100, due: 100 }, costs);
    expect(small.brokers).toBe(3);
    expect(small.redisShards).toBe(3);
    expect(small.partitions).toBe(8);
    const sizes = [10_000, 100_000, 1_000_000].map((r) => size({ created: r, due: r }, costs));
    for (const k of ['partitions', 'delayTierProcesses', 'redisShards', 'brokers', 'pgPrimaries'] as const) {
      expect(sizes.map((s) => s[k])).toEqual([...sizes.map((s) => s[k])].sort((a, b) => a - b));
    }
    expect(sizes[2]!.partitions).toBeGreaterThanOrEqual(4 * sizes[2]!.delayTierProcesses);
  });

  test('ceilings name the rate at which one unit is full', () => {
    const c = ceilings(costs);
    expect(c['one delay-tier process']).toBeCloseTo(600 / 0.2);
    expect(c['one PostgreSQL primary (WAL)']).toBeCloseTo((200 * 0.6 * 1e6) / 6000);
  });
});

describe('synthetic day', () => {
  test('the day averages the asked rate, plus the herd, and the herd drains at its rate from midnight', () => {
    const day = simulateDay({ ...DEFAULT_DAY, meanPerS: 1000, herdJobs: 1_000_000, herdPerS: 10_000 });
    expect(day).toHaveLength(1440);
    const dueJobs = day.reduce((a, m) => a + m.due * 60, 0);
    expect(dueJobs).toBeCloseTo(1000 * 86_400 + 1_000_000, -2);
    const createdJobs = day.reduce((a, m) => a + m.created * 60, 0);
    expect(createdJobs).toBeCloseTo(dueJobs, -2);
    expect(day[0]!.due).toBeGreaterThanOrEqual(10_000);
    expect(day[1]!.hot).toBeLessThan(day[0]!.hot); // the herd leaves the hot sets as it drains
    expect(day[1439]!.hot).toBeGreaterThanOrEqual(1_000_000);
  });

  test('the same seed gives the same day', () => {
    expect(simulateDay(DEFAULT_DAY)).toEqual(simulateDay(DEFAULT_DAY));
  });
});
