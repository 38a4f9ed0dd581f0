import { createRequire } from 'node:module';
import { expect, test } from 'vitest';
import { createKafka } from '../src/index.js';

interface QueueState {
  pending: unknown[];
  throttledUntil: number;
  throttleCheckTimeoutId: ReturnType<typeof setTimeout> | null;
  checkPendingRequests(): void;
}

test('after createKafka, an idle request queue arms no timer; one with requests waiting still does', () => {
  createKafka({ brokers: ['127.0.0.1:1'] });
  const RequestQueue = createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js') as {
    prototype: { scheduleCheckPendingRequests(this: QueueState): void };
  };
  const queue = (pending: unknown[]): QueueState => ({
    pending,
    throttledUntil: -1,
    throttleCheckTimeoutId: null,
    checkPendingRequests: () => undefined,
  });
  const idle = queue([]);
  RequestQueue.prototype.scheduleCheckPendingRequests.call(idle);
  expect(idle.throttleCheckTimeoutId).toBeNull(); // KafkaJS 2.2.4 alone arms a 1 ms timer here
  const waiting = queue([{}]);
  RequestQueue.prototype.scheduleCheckPendingRequests.call(waiting);
  expect(waiting.throttleCheckTimeoutId).not.toBeNull();
  if (waiting.throttleCheckTimeoutId) clearTimeout(waiting.throttleCheckTimeoutId);
});
