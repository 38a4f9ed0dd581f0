import { createRequire } from 'node:module';

interface RequestQueueInternals {
  readonly pending: readonly unknown[];
  scheduleCheckPendingRequests(): void;
}

let patched = false;

/**
 * KafkaJS 2.2.4 (the last release) re-arms a timer after every check of a connection's request
 * queue even when nothing waits in it, with a negative delay (Node makes it 1 ms): every broker
 * connection of every client spins a 1 ms timer for as long as it is open, a few % of a core per
 * idle app (tulios/kafkajs#1556, #1704; fix proposed in #1667, unreleased). A check is only
 * needed while requests wait: push() schedules one whenever it enqueues, and a finished or timed
 * out request checks the queue itself. So with nothing pending the queue schedules nothing; with
 * requests pending it behaves as before (throttle end, or 10 ms). Applied once per process, to
 * the module instance KafkaJS itself uses.
 */
export function fixKafkaJsIdleTimer(): void {
  if (patched) return;
  patched = true;
  const require = createRequire(import.meta.url);
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as {
    prototype: RequestQueueInternals;
  };
  const original = RequestQueue.prototype.scheduleCheckPendingRequests;
  if (typeof original !== 'function') return; // another KafkaJS version: leave it alone
  RequestQueue.prototype.scheduleCheckPendingRequests = function (this: RequestQueueInternals) {
    if (this.pending.length === 0) return;
    original.call(this);
  };
}
