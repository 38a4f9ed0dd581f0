import { describe, expect, test } from 'vitest';
import {
  boundedText,
  deadRecord,
  jobEventProblems,
  MAX_TIMESTAMP_MS,
  taskDispatchProblems,
  taskResultProblems,
} from '@kairos/kafka';
import type { JobEventRecord, TaskDispatchRecord, TaskResultRecord } from '@kairos/schemas';

const NOW = Date.UTC(2026, 11, 7);
const ID = '0191d2a4-7b3c-7def-8abc-0123456789ab';

const result: TaskResultRecord = {
  job_id: ID,
  tenant_id: 'acme',
  attempt: 1,
  fence: 1,
  epoch: 3,
  shard: 2,
  outcome: 'FAILED',
  error: { error_class: 'Error', message: 'boom', failure_class: 'throttled', retry_after_ms: 1000 },
  worker_id: 'w-1',
  due_at: NOW,
  started_at: NOW,
  finished_at: NOW + 5,
  resource_class: 'io',
  dispatched_at: NOW,
};

const event: JobEventRecord = {
  event_id: '0191d2a4-7b3c-7def-8abc-0123456789ac',
  event_type: 'SCHEDULED',
  job_id: ID,
  tenant_id: 'acme',
  job_type: 'mail.send',
  resource_class: 'io',
  payload: '{}',
  due_at: NOW,
  deadline_at: null,
  version: 1,
  fence: 0,
  attempt: 1,
  max_attempts: 3,
  routing_key: ID,
  shard: 2,
  occurred_at: NOW,
};

const fields = (ps: readonly { field: string }[]) => ps.map((p) => p.field);

describe('record checks', () => {
  test('well-formed records have no problems', () => {
    expect(taskResultProblems(result)).toEqual([]);
    expect(jobEventProblems(event)).toEqual([]);
  });

  test('a result names every field out of range at once', () => {
    const bad: TaskResultRecord = {
      ...result,
      job_id: 'not-a-uuid',
      attempt: 0,
      fence: -1,
      worker_id: 'w\u0000',
      started_at: 9e15,
      finished_at: -5,
      dispatched_at: MAX_TIMESTAMP_MS + 1,
      resource_class: 'GPU!',
      error: { error_class: 'E', message: 'm', failure_class: 'throttled', retry_after_ms: -1 },
    };
    expect(fields(taskResultProblems(bad))).toEqual([
      'job_id',
      'attempt',
      'fence',
      'worker_id',
      'started_at',
      'finished_at',
      'dispatched_at',
      'resource_class',
      'error.retry_after_ms',
    ]);
  });

  test('a huge Retry-After is not refused (the retry decision caps it); texts are not judged', () => {
    const r = {
      ...result,
      error: {
        error_class: 'E\u0000',
        message: 'x'.repeat(100_000),
        failure_class: 'throttled',
        retry_after_ms: 9e15,
      },
    };
    expect(taskResultProblems(r)).toEqual([]);
  });

  test('a job event names every field out of range', () => {
    const bad: JobEventRecord = {
      ...event,
      due_at: Number.NaN,
      version: 0,
      resource_class: '',
      tenant_id: '',
    };
    expect(fields(jobEventProblems(bad))).toEqual(['tenant_id', 'resource_class', 'due_at', 'version']);
  });

  test('a task names its fields out of range', () => {
    const task: TaskDispatchRecord = {
      job_id: ID,
      tenant_id: 'acme',
      job_type: 't',
      resource_class: 'io',
      payload: '{}',
      due_at: NOW,
      deadline_at: null,
      attempt: 1,
      max_attempts: 1,
      fence: 1,
      epoch: 1,
      shard: 0,
      version: 1,
      idempotency_key: 'k',
      dispatched_at: NOW,
    };
    expect(taskDispatchProblems(task)).toEqual([]);
    expect(fields(taskDispatchProblems({ ...task, fence: 0, due_at: 1e16 }))).toEqual(['due_at', 'fence']);
  });

  test('boundedText removes NUL and clips', () => {
    expect(boundedText('a\u0000b', 10)).toBe('ab');
    expect(boundedText('abcdef', 4)).toBe('abc…');
  });

  test('a dead record carries the source record and its reason', () => {
    const message = {
      key: Buffer.from('k'),
      value: Buffer.from([1, 2, 3]),
      timestamp: String(NOW),
      attributes: 0,
      offset: '42',
      headers: { a: Buffer.from('x'), b: [Buffer.from('y'), Buffer.from('z')] },
    };
    const d = deadRecord(
      { topic: 't', partition: 1, message },
      {
        reason: 'INVALID_FIELD',
        message: 'bad',
        fields: [{ field: 'fence', message: 'must be…' }],
        schemaId: 7,
      },
      'g',
      new Date(NOW),
    );
    expect(d).toMatchObject({
      dead_record_id: 't/1/42',
      reason: 'INVALID_FIELD',
      fields: [{ field: 'fence', message: 'must be…' }],
      consumer: 'g',
      schema_id: 7,
      source_offset: 42,
      original_value: Buffer.from([1, 2, 3]),
      dead_at: NOW,
    });
    expect(d.original_headers.map((h) => h.key)).toEqual(['a', 'b', 'b']);
  });
});
