import { describe, expect, test } from 'vitest';
import { topicCatalogue, topicNames } from '@kairos/kafka';

describe('topic catalogue', () => {
  test('names every topic of the design, per resource class, under a prefix', () => {
    const names = topicCatalogue({ prefix: 'x.', resourceClasses: ['critical', 'gpu'] }).map((t) => t.name);
    expect(names).toEqual([
      'x.schedule-requests',
      'x.schedule-requests.rejected',
      'x.schedule-requests.replies',
      'x.kairos.job-events',
      'x.kairos.task-results',
      'x.kairos.heartbeat',
      'x.kairos.dead-records',
      'x.kairos.workers',
      'x.kairos.tasks.critical',
      'x.kairos.waiting.critical',
      'x.kairos.dlq.critical',
      'x.kairos.tasks.gpu',
      'x.kairos.waiting.gpu',
      'x.kairos.dlq.gpu',
    ]);
  });

  test('job-events partitions are configurable and default to 8', () => {
    const find = (p?: number) =>
      topicCatalogue(p === undefined ? {} : { jobEventPartitions: p }).find(
        (t) => t.name === 'kairos.job-events',
      )?.partitions;
    expect(find()).toBe(8);
    expect(find(12)).toBe(12);
  });

  test('rejects a resource class that is not a safe topic-name segment', () => {
    expect(() => topicNames().tasks('GPU!')).toThrow(/resource class "GPU!"/);
    expect(() => topicCatalogue({ resourceClasses: ['a b'] })).toThrow(RangeError);
  });
});
