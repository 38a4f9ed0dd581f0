import { describe, expect, test } from 'vitest';
import { KairosClient } from '@kairos/client';
import { SCHEMAS } from '@kairos/schemas';
import avro from 'avsc';
import { commandBranch, createJobRecord, rescheduleJobRecord } from '../src/requests.js';

const base = { brokers: ['127.0.0.1:9092'], registryUrl: 'http://127.0.0.1:8081' };

describe('client options', () => {
  test.each([
    [{ ...base, brokers: [] }, /brokers/],
    [{ ...base, registryUrl: 'nope' }, /registryUrl/],
    [{ ...base, tenant: '' }, /tenant/],
    [{ ...base, outcomeTimeoutMs: 0 }, /outcomeTimeoutMs/],
  ])('rejects %j', (options, message) => {
    expect(() => new KairosClient(options)).toThrow(message);
  });

  test('awaitOutcome needs outcomes: true', () => {
    expect(() => new KairosClient(base).awaitOutcome('r')).toThrow(/outcomes: true/);
  });

  test('sending before start() is refused', async () => {
    await expect(
      new KairosClient({ ...base, tenant: 'acme' }).schedule({ type: 't', resourceClass: 'io' }),
    ).rejects.toThrow(/start\(\)/);
  });
});

describe('request records', () => {
  const type = avro.Type.forSchema(SCHEMAS.scheduleRequest as avro.Schema);
  const envelope = { request_id: 'r', tenant: 'acme', idempotency_key: 'k' };

  test('a create maps every field and encodes with the schema', () => {
    const record = createJobRecord({
      type: 'email.send',
      resourceClass: 'io',
      payload: { to: 'a@example.com' },
      dueAt: '2026-12-01T09:00:00+01:00',
      deadlineAt: new Date('2026-12-01T09:00:00Z'),
      maxAttempts: 5,
      retry: { baseMs: 2000 },
    });
    expect(record).toEqual({
      type: 'email.send',
      resource_class: 'io',
      payload: '{"to":"a@example.com"}',
      due_at: Date.parse('2026-12-01T08:00:00Z'),
      delay_ms: null,
      deadline_at: Date.parse('2026-12-01T09:00:00Z'),
      max_attempts: 5,
      retry: { base_ms: 2000, cap_ms: null, jitter_ms: null },
    });
    const value = { ...envelope, command: commandBranch('CreateJob', record) };
    expect(type.isValid(value)).toBe(true);
    expect(type.fromBuffer(type.toBuffer(value))).toMatchObject(value);
  });

  test('a reschedule: null deadline clears it, absent keeps it', () => {
    expect(rescheduleJobRecord({ jobId: 'j', delayMs: 10, deadlineAt: null })).toEqual({
      job_id: 'j',
      due_at: null,
      delay_ms: 10,
      deadline_at: null,
      clear_deadline: true,
    });
    expect(rescheduleJobRecord({ jobId: 'j', dueAt: 5 }).clear_deadline).toBe(false);
    const value = {
      ...envelope,
      command: commandBranch('RescheduleJob', rescheduleJobRecord({ jobId: 'j', dueAt: 5 })),
    };
    expect(type.isValid(value)).toBe(true);
  });

  test('an unparseable time or an unserializable payload is a RangeError naming the field', () => {
    expect(() => createJobRecord({ type: 't', resourceClass: 'io', dueAt: 'tomorrow' })).toThrow(/dueAt/);
    expect(() => createJobRecord({ type: 't', resourceClass: 'io', payload: () => 1 })).toThrow(/payload/);
  });
});
