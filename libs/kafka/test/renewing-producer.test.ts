import { expect, test } from 'vitest';
import { isSequenceDesync } from '../src/renewing-producer.js';

/** What KafkaJS throws: its retrier wraps the broker's protocol error as the cause. */
function protocolError(type: string): Error {
  return Object.assign(new Error('from the broker'), { name: 'KafkaJSProtocolError', type });
}

test('a sequence desync is recognised bare or wrapped by KafkaJS, other errors are not', () => {
  const outOfOrder = protocolError('OUT_OF_ORDER_SEQUENCE_NUMBER');
  expect(isSequenceDesync(outOfOrder)).toBe(true);
  expect(isSequenceDesync(new Error('non-retriable', { cause: outOfOrder }))).toBe(true);
  expect(isSequenceDesync(protocolError('UNKNOWN_PRODUCER_ID'))).toBe(true);
  expect(isSequenceDesync(protocolError('NOT_LEADER_FOR_PARTITION'))).toBe(false);
  expect(isSequenceDesync(new Error('Connection error'))).toBe(false);
  expect(isSequenceDesync('OUT_OF_ORDER_SEQUENCE_NUMBER')).toBe(false);
});
