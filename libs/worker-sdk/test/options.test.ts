import { describe, expect, test } from 'vitest';
import { Worker } from '@kairos/worker-sdk';
import { compileWorkerOptions } from '../src/options.js';

const base = {
  brokers: ['127.0.0.1:9092'],
  registryUrl: 'http://127.0.0.1:8081',
  resourceClasses: ['io'],
  redisUrl: 'redis://127.0.0.1:6379',
};

describe('worker options', () => {
  test.each([
    [{ ...base, brokers: [] }, /brokers/],
    [{ ...base, registryUrl: 'nope' }, /registryUrl/],
    [{ ...base, resourceClasses: [] }, /resourceClasses/],
    [{ ...base, resourceClasses: ['GPU'] }, /resource class "GPU"/],
    [{ ...base, concurrency: 0 }, /concurrency/],
    [{ ...base, redisUrl: 'http://x' }, /redisUrl/],
    [{ ...base, redisUrl: 'redis://a:1,http://b:2' }, /several, comma-separated/],
    [{ ...base, redisUrl: 'redis://a:1,,redis://b:2' }, /redisUrl/],
    [{ ...base, leaseMs: 50 }, /leaseMs/],
    [{ ...base, leaseMs: 3000, heartbeatMs: 3000 }, /heartbeatMs/],
    [{ ...base, onZombie: 'panic' as 'shutdown' }, /onZombie/],
    [{ ...base, maxBufferedTasks: 0 }, /maxBufferedTasks/],
    [{ ...base, concurrency: 20, maxBufferedTasks: 10 }, /maxBufferedTasks must be at least concurrency/],
    [{ ...base, reservedSlots: { critical: 2 } }, /reservedSlots names resource class "critical"/],
    [{ ...base, reservedSlots: { io: -1 } }, /reservedSlots.io must be a non-negative integer/],
    [{ ...base, concurrency: 4, reservedSlots: { io: 4 } }, /reservedSlots must total less than concurrency/],
    [{ ...base, service: 'my mailer' }, /service must be lower case/],
    [{ ...base, service: '' }, /service must be lower case/],
    [{ ...base, registryIntervalMs: 0 }, /registryIntervalMs/],
  ])('rejects %j', (options, message) => {
    expect(() => new Worker(options)).toThrow(message);
  });

  test('a Redis Cluster is given as its comma-separated seed nodes', () => {
    const seeds = 'redis://10.0.0.1:7000,redis://10.0.0.2:7000';
    expect(compileWorkerOptions({ ...base, redisUrl: seeds }).redisUrl).toBe(seeds);
  });

  test('one handler per job type', () => {
    const w = new Worker(base).handle('a', () => undefined);
    expect(() => w.handle('a', () => undefined)).toThrow(/already registered/);
  });

  test('reserved slots: none by default; a valid reservation is kept', () => {
    expect(compileWorkerOptions(base).reservedSlots).toEqual({});
    const two = { ...base, resourceClasses: ['critical', 'default'], reservedSlots: { critical: 6 } };
    expect(compileWorkerOptions(two).reservedSlots).toEqual({ critical: 6 });
  });

  test('the task buffer defaults to 64 per handler slot, at least 4,096', () => {
    expect(compileWorkerOptions(base).maxBufferedTasks).toBe(4096);
    expect(compileWorkerOptions({ ...base, concurrency: 100 }).maxBufferedTasks).toBe(6400);
    expect(compileWorkerOptions({ ...base, maxBufferedTasks: 50 }).maxBufferedTasks).toBe(50);
  });

  test('the service is named by the group id unless given (any group id will do)', () => {
    const twoClasses = { ...base, resourceClasses: ['io', 'default'] };
    expect(compileWorkerOptions(twoClasses).service).toBe('kairos-workers.default+io');
    expect(compileWorkerOptions({ ...base, service: 'mailer-v2' }).service).toBe('mailer-v2');
    expect(compileWorkerOptions(base).registryIntervalMs).toBe(10_000);
  });
});
