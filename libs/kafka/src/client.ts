import { Kafka, logLevel, type ConsumerConfig, type KafkaConfig, type RetryOptions } from 'kafkajs';
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

/**
 * How long a consumer group member may go silent before the broker gives its partitions to the
 * others, ms: the failover time of a killed delay tier, worker, tracker or ingest. 6 s is the
 * broker's default lower bound (`group.min.session.timeout.ms`); a longer one survives longer
 * stalls (GC, a blocked event loop) without a rebalance, at the cost of slower failover.
 */
export const DEFAULT_SESSION_TIMEOUT_MS = 6000;

export interface GroupMemberOptions {
  readonly groupId: string;
  /** Default: DEFAULT_SESSION_TIMEOUT_MS. */
  readonly sessionTimeoutMs?: number;
}

/**
 * The consumer settings of every Kairos group member, so one policy decides failover: heartbeats
 * at a sixth of the session, and fetches that long-poll for at most as long, since KafkaJS sends
 * heartbeats only between fetches (its default 5 s wait would starve a 6 s session).
 */
export function groupMemberConfig(o: GroupMemberOptions): ConsumerConfig {
  const sessionTimeout = o.sessionTimeoutMs ?? DEFAULT_SESSION_TIMEOUT_MS;
  if (!Number.isInteger(sessionTimeout) || sessionTimeout < 600)
    throw new RangeError(`sessionTimeoutMs must be an integer >= 600, got ${sessionTimeout}`);
  const beat = Math.floor(sessionTimeout / 6);
  return { groupId: o.groupId, sessionTimeout, heartbeatInterval: beat, maxWaitTimeInMs: beat };
}
