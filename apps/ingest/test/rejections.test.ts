import { KairosError } from '@kairos/core';
import { describe, expect, test } from 'vitest';
import { commandRejection, fieldsRejection, rejectionRecord } from '../src/rejections.js';

describe('rejection reasons', () => {
  test('a policy rule is the reason only when it is the only problem', () => {
    expect(fieldsRejection([{ field: 'due_at', message: 'old', rule: 'DUE_TOO_FAR_IN_PAST' }]).reason).toBe(
      'DUE_TOO_FAR_IN_PAST',
    );
    expect(fieldsRejection([{ field: 'payload', message: 'big', rule: 'PAYLOAD_TOO_LARGE' }]).reason).toBe(
      'PAYLOAD_TOO_LARGE',
    );
    const mixed = fieldsRejection([
      { field: 'payload', message: 'big', rule: 'PAYLOAD_TOO_LARGE' },
      { field: 'type', message: 'bad' },
    ]);
    expect(mixed.reason).toBe('INVALID_FIELD');
    // The rule is not part of the published fields.
    expect(mixed.fields).toEqual([
      { field: 'payload', message: 'big' },
      { field: 'type', message: 'bad' },
    ]);
  });

  test('command errors map to reasons; outages and bugs are never rejections', () => {
    expect(commandRejection(new KairosError('NOT_FOUND', 'no job'))?.reason).toBe('JOB_NOT_FOUND');
    expect(commandRejection(new KairosError('CONFLICT', 'is SUCCEEDED'))?.reason).toBe('JOB_STATE_CONFLICT');
    expect(
      commandRejection(
        new KairosError('VALIDATION', 'x', { fields: [{ field: 'id', message: 'not a UUID' }] }),
      ),
    ).toMatchObject({ reason: 'INVALID_FIELD', fields: [{ field: 'job_id' }] });
    expect(commandRejection(new KairosError('DEPENDENCY_UNAVAILABLE', 'down'))).toBeUndefined();
    expect(commandRejection(Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }))).toBeUndefined();
    expect(commandRejection(new TypeError('bug'))).toBeUndefined();
  });

  test('for a schedule command the same errors name the schedule', () => {
    expect(commandRejection(new KairosError('NOT_FOUND', 'no schedule'), 'schedule')?.reason).toBe(
      'SCHEDULE_NOT_FOUND',
    );
    expect(commandRejection(new KairosError('CONFLICT', 'is DELETED'), 'schedule')?.reason).toBe(
      'SCHEDULE_STATE_CONFLICT',
    );
    expect(
      commandRejection(
        new KairosError('VALIDATION', 'x', {
          fields: [
            { field: 'id', message: 'not a UUID' },
            { field: 'time_zone', message: 'unknown' },
          ],
        }),
        'schedule',
      ),
    ).toMatchObject({ reason: 'INVALID_FIELD', fields: [{ field: 'schedule_id' }, { field: 'time_zone' }] });
  });

  test('the record keeps the original key, headers and bytes', () => {
    const record = rejectionRecord(
      {
        topic: 'schedule-requests',
        partition: 2,
        message: {
          key: Buffer.from('k'),
          value: Buffer.from([1, 2, 3]),
          headers: { a: Buffer.from('x'), b: ['y', 'z'], c: undefined },
          offset: '41',
          timestamp: '1700000000000',
          attributes: 0,
        },
      },
      { reason: 'UNDECODABLE', message: 'no', fields: [] },
      undefined,
      null,
      new Date(1700000001000),
    );
    expect(record).toMatchObject({
      rejection_id: 'schedule-requests/2/41',
      reason: 'UNDECODABLE',
      request_id: null,
      source_offset: 41,
      source_timestamp: 1700000000000,
      original_key: Buffer.from('k'),
      original_value: Buffer.from([1, 2, 3]),
      rejected_at: 1700000001000,
    });
    expect(record.original_headers).toEqual([
      { key: 'a', value: Buffer.from('x') },
      { key: 'b', value: Buffer.from('y') },
      { key: 'b', value: Buffer.from('z') },
      { key: 'c', value: null },
    ]);
  });
});
