import { Kafka, logLevel, type ConsumerConfig, type KafkaConfig, type RetryOptions } from 'kafkajs';
import { completeSends, notingPartitioner } from './complete-sends.js';
import { RenewingProducer } from './renewing-producer.js';
import { sizedSends } from './sized-sends.js';
import { fixKafkaJsIdleTimer } from './request-queue-fix.js';
import { describeKafkaConnection, kafkaSecurityConfig, type KafkaSecurity } from './security.js';

export interface KafkaClientOptions extends KafkaSecurity {
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

/** Kafka refused this client's credentials or TLS: retrying cannot help, so it is reported at once. */
export class KafkaAuthenticationError extends Error {
  override readonly name = 'KafkaAuthenticationError';
}

/** Errors of connect() that mean the security settings are wrong, named with where and how. */
function explainConnectError(err: unknown, where: string): unknown {
  if (!(err instanceof Error)) return err;
  if (err.name === 'KafkaJSSASLAuthenticationError')
    return new KafkaAuthenticationError(`Kafka refused authentication at ${where}: ${err.message}`, {
      cause: err,
    });
  const tlsCode = /certificate|self[- ]signed|SSL|TLS|handshake|wrong version number/i;
  // A certificate KafkaJS cannot verify is retried as a connection error, then reported as such.
  const connection = err.name === 'KafkaJSConnectionError' || err.name === 'KafkaJSNumberOfRetriesExceeded';
  if (connection && tlsCode.test(err.message))
    return new KafkaAuthenticationError(`TLS with Kafka failed at ${where}: ${err.message}`, { cause: err });
  return err;
}

/** Makes connect() of a producer, consumer or admin explain security failures (see above). */
function explainingConnect<T extends { connect(): Promise<void> }>(client: T, where: string): T {
  const connect = client.connect.bind(client);
  client.connect = async () => {
    try {
      await connect();
    } catch (err) {
      throw explainConnectError(err, where);
    }
  };
  return client;
}

/**
 * The one KafkaJS client factory: TLS and SASL validated (a RangeError names the bad option), the
 * idle-timer fix applied, producers whose sends are checked complete (completeSends) and split
 * under the broker's batch size limit (sizedSends), idempotent
 * ones that renew themselves after a failed send (RenewingProducer), and connect() failures caused by credentials or certificates reported
 * with the brokers, TLS and mechanism instead of as a retried connection error.
 */
export function createKafka(options: KafkaClientOptions): Kafka {
  fixKafkaJsIdleTimer();
  if (options.brokers.length === 0) throw new RangeError('brokers must name at least one broker');
  const config: KafkaConfig = {
    clientId: options.clientId ?? 'kairos',
    brokers: [...options.brokers],
    logLevel: options.logLevel ?? logLevel.ERROR,
    connectionTimeout: options.connectionTimeoutMs ?? 5000,
    ...kafkaSecurityConfig(options),
    ...(options.retry ? { retry: options.retry } : {}),
  };
  const kafka = new Kafka(config);
  const where = describeKafkaConnection(options.brokers, options);
  const { producer, consumer, admin } = kafka;
  kafka.producer = (c) => {
    const config = { ...c, createPartitioner: notingPartitioner(c?.createPartitioner) };
    const make = () => sizedSends(completeSends(explainingConnect(producer.call(kafka, config), where)));
    // KafkaJS never renews an idempotent producer whose sequence numbers desynced; this one does.
    return c?.idempotent === true && c.transactionalId === undefined ? new RenewingProducer(make) : make();
  };
  kafka.consumer = (c) => explainingConnect(consumer.call(kafka, c), where);
  kafka.admin = (c) => explainingConnect(admin.call(kafka, c), where);
  return kafka;
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
