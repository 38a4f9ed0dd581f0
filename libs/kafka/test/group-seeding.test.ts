import { describe, expect, test } from 'vitest';
import { planSeeds, type CommittedOffsets } from '@kairos/kafka';

/** One topic `t`: offsets by partition ('-1': none committed). */
const on = (...offsets: string[]): CommittedOffsets => [
  { topic: 't', partitions: offsets.map((offset, partition) => ({ partition, offset })) },
];

describe('planSeeds', () => {
  test('an uncommitted partition starts at the oldest position another group committed', () => {
    const plan = planSeeds(on('-1', '-1'), [on('7', '3'), on('5', '-1'), on('9', '4')]);
    expect(plan).toEqual({
      offsets: [
        { topic: 't', partition: 0, offset: '5' },
        { topic: 't', partition: 1, offset: '3' },
      ],
      fromBeginning: [],
    });
  });

  test('a partition no group has committed on is read from the beginning', () => {
    const plan = planSeeds(on('-1', '-1'), [on('4', '-1'), []]);
    expect(plan.offsets).toEqual([{ topic: 't', partition: 0, offset: '4' }]);
    expect(plan.fromBeginning).toEqual([{ topic: 't', partition: 1 }]);
  });

  test("the group's own commits stand, even behind or ahead of the others", () => {
    expect(planSeeds(on('2', '9'), [on('5', '5')])).toEqual({ offsets: [], fromBeginning: [] });
    expect(planSeeds(on('2', '-1'), [on('5', '5')]).offsets).toEqual([
      { topic: 't', partition: 1, offset: '5' },
    ]);
  });

  test('offsets of other topics do not count', () => {
    const elsewhere: CommittedOffsets = [{ topic: 'u', partitions: [{ partition: 0, offset: '8' }] }];
    expect(planSeeds(on('-1'), [elsewhere]).fromBeginning).toEqual([{ topic: 't', partition: 0 }]);
  });

  test('offsets beyond 2^53 are kept exact', () => {
    const big = '9007199254740993';
    expect(planSeeds(on('-1'), [on(big)]).offsets).toEqual([{ topic: 't', partition: 0, offset: big }]);
  });
});
