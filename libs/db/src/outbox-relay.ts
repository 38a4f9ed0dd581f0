import type pg from 'pg';
import type { OutboxRow } from './jobs.js';

/**
 * Takes outbox rows once their transaction has committed, to publish them at once instead of
 * waiting for Debezium (the fast path). Debezium still publishes every row from the WAL (the
 * guaranteed path), so a row published here reaches Kafka twice; every consumer of the outbox's
 * topics already ignores a version it has seen. `publish` must not throw or block: a row it
 * drops is late, never lost.
 */
export interface OutboxPublisher {
  publish(rows: readonly OutboxRow[]): void;
}

const publishers = new WeakMap<pg.Pool, OutboxPublisher>();
/** Outbox rows written so far by each open transaction of inTransaction. */
const written = new WeakMap<object, OutboxRow[]>();

/** Every transaction of this pool (through inTransaction) hands its committed outbox rows over. */
export function publishOutboxAfterCommit(pool: pg.Pool, publisher: OutboxPublisher | undefined): void {
  if (publisher) publishers.set(pool, publisher);
  else publishers.delete(pool);
}

/** Outbox rows committed by a single statement outside inTransaction: published now. */
export function outboxCommitted(pool: pg.Pool, rows: readonly OutboxRow[]): void {
  if (rows.length > 0) publishers.get(pool)?.publish(rows);
}

/** inTransaction: a transaction on `client` begins. */
export function outboxTransactionBegins(pool: pg.Pool, client: object): void {
  if (publishers.has(pool)) written.set(client, []);
}

/** An outbox writer: these rows were written in the transaction on `db` (if one is tracked). */
export function noteOutboxWritten(db: object, rows: readonly OutboxRow[]): void {
  written.get(db)?.push(...rows);
}

/** inTransaction: the transaction on `client` ended; committed rows go to the pool's publisher. */
export function outboxTransactionEnds(pool: pg.Pool, client: object, committed: boolean): void {
  const rows = written.get(client);
  written.delete(client);
  if (committed && rows) outboxCommitted(pool, rows);
}
