import { Kafka, logLevel, type KafkaConfig, type RetryOptions } from 'kafkajs';
import { fixKafkaJsIdleTimer } from './request-queue-fix.js';

export interface KafkaClientOptions {
  /** Bootstrap brokers, e.g. ['127.0.0.1:59092']. Required. */
  readonly brokers: readonly string[];
  /** Client id reported to the brokers. Default: 'kairos'. */
  readonly clientId?: string;
  /** KafkaJS log level. Default: ERROR, since Kairos logs through pino itself. */
  readonly logLevel?: logLevel;
  /** Connection timeout in ms. Default: 5000. */
  readonly connectionTimeoutMs?: number;
  /** KafkaJS retry policy for the client's requests. Default: KafkaJS's own (5 retries). */
  readonly retry?: RetryOptions;
}

let timerWarningFiltered = false;

/**
 * KafkaJS 2.2.4's request queue schedules `setTimeout(fn, negative)` when a response arrives
 * after its deadline check, which Node 24 reports as TimeoutNegativeWarning on every such reply.
 * It is harmless (Node clamps to 1 ms), so that one warning is dropped; all others still print.
 */
function filterKafkaJsTimerWarning(): void {
  if (timerWarningFiltered) return;
  timerWarningFiltered = true;
  const defaults = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', (warning) => {
    if (warning.name === 'TimeoutNegativeWarning') return;
    for (const listener of defaults) listener(warning);
  });
}

export function createKafka(options: KafkaClientOptions): Kafka {
  filterKafkaJsTimerWarning();
  fixKafkaJsIdleTimer();
  if (options.brokers.length === 0) throw new RangeError('brokers must name at least one broker');
  const config: KafkaConfig = {
    clientId: options.clientId ?? 'kairos',
    brokers: [...options.brokers],
    logLevel: options.logLevel ?? logLevel.ERROR,
    connectionTimeout: options.connectionTimeoutMs ?? 5000,
    ...(options.retry ? { retry: options.retry } : {}),
  };
  return new Kafka(config);
}
