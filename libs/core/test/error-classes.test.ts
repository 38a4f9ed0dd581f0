import { describe, expect, test } from 'vitest';
import {
  classified,
  classifyError,
  isTransient,
  KairosError,
  registerErrorRecogniser,
  retryOnSerialization,
  type ErrorRecogniser,
} from '@kairos/core';

// A stand-in library boundary: errors of a made-up library that speaks in `sqlstate`.
class FakeLibError extends Error {
  constructor(readonly sqlstate: string) {
    super(`fake ${sqlstate}`);
  }
}
const fakeRecogniser: ErrorRecogniser = (err) =>
  err instanceof FakeLibError
    ? classified(err.sqlstate === 'RACE' ? 'serialization' : 'transient', err.sqlstate)
    : undefined;
registerErrorRecogniser(fakeRecogniser);

describe('classifyError', () => {
  test('KairosErrors by their code: input, dependency, script refusals, and the rest', () => {
    expect(classifyError(new KairosError('VALIDATION', 'bad'))).toEqual({
      class: 'invalid',
      code: 'VALIDATION',
      retriable: false,
    });
    expect(classifyError(new KairosError('UNDECODABLE', 'x')).class).toBe('invalid');
    expect(classifyError(new KairosError('DEPENDENCY_UNAVAILABLE', 'down'))).toEqual({
      class: 'transient',
      code: 'DEPENDENCY_UNAVAILABLE',
      retriable: true,
    });
    expect(classifyError(new KairosError('STALE_EPOCH', 'old'))).toEqual({
      class: 'script',
      code: 'STALE_EPOCH',
      retriable: false,
    });
    expect(classifyError(new KairosError('REDIS_OOM', 'full'))).toEqual({
      class: 'script',
      code: 'REDIS_OOM',
      retriable: true,
    });
    expect(classifyError(new KairosError('CONFIG', 'x')).class).toBe('other');
  });

  test('a Node network error is a dependency down, whoever threw it', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(classifyError(refused)).toEqual({ class: 'transient', code: 'ECONNREFUSED', retriable: true });
    expect(isTransient(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))).toBe(true);
  });

  test('a registered recogniser decides for its library; anything unrecognised is other', () => {
    expect(classifyError(new FakeLibError('RACE'))).toEqual({
      class: 'serialization',
      code: 'RACE',
      retriable: true,
    });
    expect(classifyError(new Error('boom'))).toEqual({ class: 'other', code: undefined, retriable: false });
    expect(classifyError('a string')).toEqual({ class: 'other', code: undefined, retriable: false });
    expect(classifyError(null).class).toBe('other');
    expect(isTransient(new TypeError('x is undefined'))).toBe(false);
  });

  test('registering the same recogniser twice keeps one', () => {
    registerErrorRecogniser(fakeRecogniser);
    expect(classifyError(new FakeLibError('DOWN')).class).toBe('transient');
  });
});

describe('the policy', () => {
  test('transient and serialization are retriable; of script codes only REDIS_OOM; invalid and other never', () => {
    expect(classified('transient').retriable).toBe(true);
    expect(classified('serialization', '40001').retriable).toBe(true);
    expect(classified('script', 'REDIS_OOM').retriable).toBe(true);
    expect(classified('script', 'STALE_EPOCH').retriable).toBe(false);
    expect(classified('script').retriable).toBe(false);
    expect(classified('invalid').retriable).toBe(false);
    expect(classified('other').retriable).toBe(false);
  });
});

describe('retryOnSerialization', () => {
  test('redoes the work after a lost race and answers its result', async () => {
    let calls = 0;
    const retried: number[] = [];
    const out = await retryOnSerialization(
      () => (++calls < 3 ? Promise.reject(new FakeLibError('RACE')) : Promise.resolve('done')),
      { onRetry: (_err, tries) => retried.push(tries) },
    );
    expect(out).toBe('done');
    expect(calls).toBe(3);
    expect(retried).toEqual([1, 2]);
  });

  test('gives up after `tries` and throws the last race', async () => {
    let calls = 0;
    const race = new FakeLibError('RACE');
    await expect(
      retryOnSerialization(
        () => {
          calls++;
          return Promise.reject(race);
        },
        { tries: 5 },
      ),
    ).rejects.toBe(race);
    expect(calls).toBe(5);
  });

  test('never redoes anything but a lost race', async () => {
    for (const err of [new FakeLibError('DOWN'), new KairosError('STALE_EPOCH', 'old'), new Error('bug')]) {
      let calls = 0;
      await expect(
        retryOnSerialization(() => {
          calls++;
          return Promise.reject(err);
        }),
      ).rejects.toBe(err);
      expect(calls).toBe(1);
    }
  });
});
