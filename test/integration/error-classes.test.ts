import { expect, test } from 'vitest';
import { KafkaJSConnectionError, KafkaJSNumberOfRetriesExceeded } from 'kafkajs';
import pg from 'pg';
import { classifyError, isTransient, retryOnSerialization } from '@kairos/core';
import '@kairos/db';
import { createRegistryClient } from '@kairos/kafka';
import '@kairos/redis';
import { useNamespace } from '../support/namespace.js';

/** What a call failed with (it must fail). */
async function failure(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    () => expect.unreachable('the call should have failed'),
    (err: unknown) => err,
  );
}

/** Has PostgreSQL itself raise an error with this SQLSTATE. */
const raise = (sqlstate: string) =>
  `DO $$ BEGIN RAISE EXCEPTION 'raised for the test' USING ERRCODE = '${sqlstate}'; END $$`;

test('PostgreSQL: lost races, lost connections, refused connections, data faults and plain errors', async () => {
  const ns = await useNamespace('error-classes-pg');
  const pool = ns.pgPool(2);
  const classOf = async (sql: string) => classifyError(await failure(pool.query(sql)));
  expect(await classOf(raise('40001'))).toEqual({ class: 'serialization', code: '40001', retriable: true });
  expect(await classOf(raise('40P01'))).toEqual({ class: 'serialization', code: '40P01', retriable: true });
  expect(await classOf(raise('57P01'))).toEqual({ class: 'transient', code: '57P01', retriable: true });
  expect(await classOf(raise('08006'))).toEqual({ class: 'transient', code: '08006', retriable: true });
  // Data faults: the values are wrong whenever they are sent (a consumer sets such a record aside).
  expect(await classOf('SELECT 1/0')).toEqual({ class: 'invalid', code: '22012', retriable: false });
  expect(await classOf(`SELECT '0NaN-NaN-NaN'::timestamptz`)).toEqual({
    class: 'invalid',
    code: '22007',
    retriable: false,
  });
  const nul = classifyError(await failure(pool.query('SELECT $1::text', ['a\u0000b'])));
  expect(nul).toEqual({ class: 'invalid', code: '22021', retriable: false });
  // A unique violation is a race a retry can win: not a data fault.
  expect(await classOf(raise('23505'))).toEqual({ class: 'other', code: undefined, retriable: false });
  expect(await classOf('SELEC 1')).toEqual({ class: 'other', code: undefined, retriable: false });

  // A server that refuses the connection (a port nothing listens on).
  const nowhere = new pg.Client({ connectionString: 'postgres://kairos@127.0.0.1:1/kairos' });
  expect(classifyError(await failure(nowhere.connect())).class).toBe('transient');

  // A connection the server ends under the client.
  const victim = new pg.Client({ connectionString: ns.services.pgUrl });
  victim.on('error', () => undefined);
  await victim.connect();
  const pid = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
  await pool.query('SELECT pg_terminate_backend($1)', [pid]);
  expect(isTransient(await failure(victim.query('SELECT 1')))).toBe(true);
  await victim.end().catch(() => undefined);
  await pool.end();
});

test('retryOnSerialization redoes a transaction PostgreSQL aborted for a lost race', async () => {
  const ns = await useNamespace('error-classes-retry');
  const pool = ns.pgPool(2);
  let tries = 0;
  const out = await retryOnSerialization(async () => {
    tries++;
    if (tries < 3) await pool.query(raise('40001'));
    return (await pool.query<{ one: number }>('SELECT 1 AS one')).rows[0]!.one;
  });
  expect({ out, tries }).toEqual({ out: 1, tries: 3 });
  await expect(retryOnSerialization(() => pool.query(raise('23505')))).rejects.toMatchObject({
    code: '23505',
  });
  await pool.end();
});

test('Redis: a script’s own error code, not its text; a server not ready is transient; command errors are other', async () => {
  const ns = await useNamespace('error-classes-redis');
  const redis = ns.redis();
  const classOf = async (script: string) => classifyError(await failure(redis.eval(script, 0)));
  // A bare code (Redis prefixes ERR to it) and a code with its argument.
  expect(await classOf("return redis.error_reply('STALE_EPOCH')")).toEqual({
    class: 'script',
    code: 'STALE_EPOCH',
    retriable: false,
  });
  expect(await classOf("return redis.error_reply('BAD_RATE_LIMIT cpu')")).toEqual({
    class: 'script',
    code: 'BAD_RATE_LIMIT',
    retriable: false,
  });
  expect(await classOf("return redis.call('NO_SUCH_COMMAND')")).toMatchObject({
    class: 'other',
    code: 'ERR',
  });
  expect(await classOf("return redis.error_reply('LOADING try later')")).toEqual({
    class: 'transient',
    code: 'LOADING',
    retriable: true,
  });
  // A Redis Cluster moving a slot: a redirection that reached the caller is worth a retry.
  for (const reply of ['MOVED 3999 127.0.0.1:6381', 'ASK 3999 127.0.0.1:6381', 'TRYAGAIN Multiple keys'])
    expect(await classOf(`return redis.error_reply('${reply}')`)).toMatchObject({
      class: 'transient',
      code: reply.split(' ')[0],
    });
  expect(classifyError(new Error('Too many Cluster redirections. Last error: TRYAGAIN'))).toMatchObject({
    class: 'transient',
    code: 'CLUSTER_REDIRECTIONS',
  });
  await redis.set(`${ns.prefix}string`, 'v');
  expect(classifyError(await failure(redis.hget(`${ns.prefix}string`, 'f')))).toEqual({
    class: 'other',
    code: 'WRONGTYPE',
    retriable: false,
  });
  await redis.quit();
});

test('Redis: an unreachable server is a dependency down', async () => {
  const { Redis } = await import('ioredis');
  const nowhere = new Redis({ port: 1, host: '127.0.0.1', maxRetriesPerRequest: 0, lazyConnect: true });
  nowhere.on('error', () => undefined);
  try {
    expect(isTransient(await failure(nowhere.connect()))).toBe(true);
    expect(isTransient(await failure(nowhere.get('k')))).toBe(true);
  } finally {
    nowhere.disconnect();
  }
});

test('KafkaJS: what it marks retriable is transient, retries exhausted are final; a registry down is transient', async () => {
  expect(classifyError(new KafkaJSConnectionError('Connection error'))).toEqual({
    class: 'transient',
    code: 'KafkaJSConnectionError',
    retriable: true,
  });
  const exhausted = new KafkaJSNumberOfRetriesExceeded(new KafkaJSConnectionError('x'), {
    retryCount: 5,
    retryTime: 100,
  });
  expect(classifyError(exhausted).retriable).toBe(false);

  const nowhere = createRegistryClient({ url: 'http://127.0.0.1:1/apis/ccompat/v7', timeoutMs: 2000 });
  expect(classifyError(await failure(nowhere.getBySubjectAndId('', 1)))).toMatchObject({
    class: 'transient',
    retriable: true,
  });
});
