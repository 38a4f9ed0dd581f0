import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import { expect, test } from 'vitest';
import { json, kairos } from '../support/cli.js';
import { useNamespace } from '../support/namespace.js';
import { eventually, startPipeline } from '../support/pipeline.js';

// The kairos CLI, spawned as users run it, against a real API: JSON for scripts, tables for
// people, exit codes that mean something, the key from the environment or the config file.

test('kairos jobs, dlq replay, keys and status against the API; exit codes; JSON and tables', async () => {
  const ns = await useNamespace('cli');
  const p = await startPipeline(ns);

  const created = await kairos(p, [
    '--json',
    'jobs',
    'create',
    '--type',
    'cli.job',
    '--class',
    'io',
    '--tenant',
    'acme',
    '--delay-ms',
    '3600000',
    '--payload',
    '{"to":"a@example.com"}',
  ]);
  expect(created.code, created.stderr).toBe(0);
  const job = json<{ id: string; state: string }>(created);
  expect(job.state).toBe('SCHEDULED');

  const table = await kairos(p, ['jobs', 'list', '--tenant', 'acme']);
  expect(table.code).toBe(0);
  expect(table.stdout).toContain(job.id);
  expect(table.stdout).toMatch(/│ id\s+│ tenant/);
  const got = await kairos(p, ['--json', 'jobs', 'get', job.id]);
  expect(json<{ payload: unknown }>(got).payload).toEqual({ to: 'a@example.com' });
  expect((await kairos(p, ['--json', 'jobs', 'attempts', job.id])).code).toBe(0);

  // Exit codes: not found 4, conflict 5, bad input 2, no key 3.
  expect((await kairos(p, ['jobs', 'get', '00000000-0000-4000-8000-000000000000'])).code).toBe(4);
  expect((await kairos(p, ['jobs', 'cancel', job.id])).code).toBe(0);
  const again = await kairos(p, ['jobs', 'cancel', job.id]);
  expect(again.code).toBe(5);
  expect(again.stderr).toMatch(/409 CONFLICT/);
  const bad = await kairos(p, ['jobs', 'create', '--type', 'cli.job', '--tenant', 'acme', '--class', 'nope']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toMatch(/resource_class/);
  expect((await kairos(p, ['jobs', 'list', '--tenant', 'acme'], { KAIROS_API_KEY: '' })).code).toBe(3);
  expect((await kairos(p, ['jobs', 'frobnicate'])).code).toBe(2);

  // Dead letters: a dry run by default, then --confirm replays and follows to the end.
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push(
      json<{ id: string }>(
        await kairos(p, [
          '--json',
          'jobs',
          'create',
          '--type',
          'cli.dead',
          '--tenant',
          'acme',
          '--delay-ms',
          '3600000',
        ]),
      ).id,
    );
  }
  await p.pool.query(
    `UPDATE jobs SET state = 'FAILED', finished_at = now(), last_failure_class = 'permanent' WHERE id = ANY($1::uuid[])`,
    [ids],
  );
  expect(
    json<{ dead_letters: unknown[] }>(await kairos(p, ['--json', 'dlq', 'list', '--tenant', 'acme']))
      .dead_letters,
  ).toHaveLength(5);
  const dry = await kairos(p, ['dlq', 'replay', '--tenant', 'acme', '--type', 'cli.dead']);
  expect(dry.stdout).toMatch(/dry run: 5 dead letter\(s\) would be replayed; nothing changed/);
  expect(
    (await p.pool.query('SELECT count(*)::int AS n FROM jobs WHERE replay_of IS NOT NULL')).rows[0],
  ).toEqual({ n: 0 });
  const replay = await kairos(p, [
    '--json',
    'dlq',
    'replay',
    '--tenant',
    'acme',
    '--type',
    'cli.dead',
    '--rate',
    '50',
    '--confirm',
  ]);
  expect(replay.code, replay.stderr).toBe(0);
  expect(json<{ state: string; replayed: number }>(replay)).toMatchObject({ state: 'DONE', replayed: 5 });
  expect(
    (await p.pool.query('SELECT count(*)::int AS n FROM jobs WHERE replay_of = ANY($1::uuid[])', [ids]))
      .rows[0],
  ).toEqual({ n: 5 });

  // Keys: create (shown once), list, revoke; the key from a config file works too.
  const key = json<{ id: string; key: string }>(
    await kairos(p, [
      '--json',
      'keys',
      'create',
      '--name',
      'ci',
      '--tenant',
      'acme',
      '--scopes',
      'jobs:read',
    ]),
  );
  expect(
    json<{ keys: { id: string }[] }>(await kairos(p, ['--json', 'keys', 'list'])).keys.map((k) => k.id),
  ).toContain(key.id);
  const status = await kairos(p, ['--json', 'status'], { KAIROS_API_KEY: key.key });
  expect(json<{ health: string; key: { tenant: string } }>(status)).toMatchObject({
    health: 'ok',
    key: { tenant: 'acme' },
  });
  const dir = mkdtempSync(resolve(tmpdir(), 'kairos-cli-'));
  ns.defer(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
  writeFileSync(resolve(dir, 'config.json'), JSON.stringify({ url: p.apiUrl, key: key.key }));
  const fromFile = await kairos(p, ['--json', 'status'], {
    KAIROS_API_KEY: '',
    KAIROS_API_URL: '',
    KAIROS_CONFIG: resolve(dir, 'config.json'),
  });
  expect(json<{ key: { key_id: string } }>(fromFile).key.key_id).toBe(key.id);
  expect((await kairos(p, ['keys', 'revoke', key.id])).code).toBe(0);
  // Revoked with what it made (--cascade): a key an acme admin minted stops working too.
  const boss = json<{ id: string; key: string }>(
    await kairos(p, [
      '--json',
      'keys',
      'create',
      '--name',
      'ci-boss',
      '--tenant',
      'acme',
      '--scopes',
      'admin',
    ]),
  );
  const minted = json<{ id: string; key: string }>(
    await kairos(p, ['--json', 'keys', 'create', '--name', 'ci-child', '--scopes', 'jobs:read'], {
      KAIROS_API_KEY: boss.key,
    }),
  );
  const revoked = await kairos(p, ['keys', 'revoke', boss.id, '--cascade']);
  expect(revoked.code).toBe(0);
  expect(revoked.stdout).toContain(`revoked with it: ${minted.id}`);
  expect((await kairos(p, ['status'], { KAIROS_API_KEY: minted.key })).code).toBe(3);
  expect((await kairos(p, ['status'], { KAIROS_API_KEY: key.key })).code).toBe(3);
}, 180_000);

test('kairos topics tail, dlq rewind and status read Kafka itself: Avro decoded, headers, times, consumer lag', async () => {
  const ns = await useNamespace('cli-kafka');
  const p = await startPipeline(ns);
  const kafkaEnv = {
    KAIROS_KAFKA_BROKERS: ns.services.kafkaBrokers,
    KAIROS_REGISTRY_URL: ns.services.registryUrl,
    KAIROS_TOPIC_PREFIX: ns.prefix,
  };

  // status: the services and the namespace's consumer groups with their lag (an admin key).
  const status = json<{
    services: { name: string; ok: boolean }[];
    groups: { group: string; lag: number; members: unknown[] }[];
  }>(await kairos(p, ['--json', 'status']));
  expect(status.services.map((s) => [s.name, s.ok])).toEqual([
    ['postgresql', true],
    ['kafka', true],
    ['schema registry', true],
  ]);
  const tier = status.groups.find((g) => g.group === `${ns.prefix}delay-tier`);
  expect(tier?.members.length).toBe(1);
  expect(tier?.lag).toBeGreaterThanOrEqual(0);
  const table = await kairos(p, ['status']);
  expect(table.stdout).toMatch(/delay-tier/);

  // topics tail: a job's event, Avro decoded through the registry, with its headers.
  const job = json<{ id: string }>(
    await kairos(p, [
      '--json',
      'jobs',
      'create',
      '--type',
      'cli.tail',
      '--tenant',
      'acme',
      '--delay-ms',
      '3600000',
    ]),
  );
  const events = `${ns.prefix}kairos.job-events`;
  const tail = await kairos(p, ['--json', 'topics', 'tail', events, '--from', 'beginning'], kafkaEnv);
  expect(tail.code, tail.stderr).toBe(0);
  const records = tail.stdout
    .trim()
    .split('\n')
    .map(
      (l) =>
        JSON.parse(l) as { key: string; headers: Record<string, string>; value: Record<string, unknown> },
    );
  const mine = records.find((r) => r.key === job.id);
  expect(mine?.headers['kairos-event-type']).toBe('JobScheduled');
  expect(JSON.stringify(mine?.value)).toContain('cli.tail');
  const people = await kairos(p, ['topics', 'tail', events, '--last', '1'], kafkaEnv);
  expect(people.stdout).toMatch(new RegExp(`${events.replace(/\./g, '\\.')}\\[\\d+\\]@\\d+`));
  expect((await kairos(p, ['topics', 'tail', `${ns.prefix}nope`], kafkaEnv)).code).toBe(4);
  expect((await kairos(p, ['topics', 'tail', events, '--since', 'yesterday'], kafkaEnv)).code).toBe(2);

  // dlq rewind: a consumer group of the DLQ topic that read everything goes back one hour.
  const dlq = `${ns.prefix}kairos.dlq.default`;
  const now = Date.now();
  const producer = ns.producer();
  await producer.connect();
  const dead = (i: number, at: number) => ({
    key: `dead-${i}`,
    value: JSON.stringify({ n: i }),
    timestamp: String(at),
    headers: { 'kairos-error-class': 'permanent' },
  });
  await producer.send({
    topic: dlq,
    acks: -1,
    messages: [0, 1, 2]
      .map((i) => dead(i, now - 2 * 3_600_000))
      .concat([3, 4, 5].map((i) => dead(i, now - 600_000))),
  });
  await producer.disconnect();
  const group = `${ns.prefix}dlq-reader`;
  const admin = ns.admin();
  await admin.connect();
  ns.defer(() => admin.disconnect());
  const ends = await admin.fetchTopicOffsets(dlq);
  await admin.setOffsets({
    groupId: group,
    topic: dlq,
    partitions: ends.map((e) => ({ partition: e.partition, offset: e.high })),
  });
  const committed = async () =>
    (await admin.fetchOffsets({ groupId: group, topics: [dlq] }))[0]!.partitions.reduce(
      (s, x) => s + Number(x.offset),
      0,
    );
  const before = await committed();

  const sinceHour = ['--json', 'dlq', 'rewind', 'default', '--group', group, '--since', '1h'];
  const dry = json<{ applied: boolean; partitions: { toRead: number }[] }>(
    await kairos(p, sinceHour, kafkaEnv),
  );
  expect(dry.applied).toBe(false);
  expect(dry.partitions.reduce((s, x) => s + x.toRead, 0)).toBe(3);
  expect(await committed()).toBe(before);
  const ranged = json<{ partitions: { inRange: number }[] }>(
    await kairos(
      p,
      ['--json', 'dlq', 'rewind', 'default', '--group', group, '--earliest', '--until', '1h'],
      kafkaEnv,
    ),
  );
  expect(ranged.partitions.reduce((s, x) => s + x.inRange, 0)).toBe(3);
  const moved = await kairos(p, [...sinceHour, '--confirm'], kafkaEnv);
  expect(moved.code, moved.stderr).toBe(0);
  expect(await committed()).toBe(before - 3);
  // A topic written in transactions (as the ingest writes its replies) ends at a commit marker,
  // which no consumer is handed: the tail still stops at the end.
  const txTopic = `${ns.prefix}kairos.dlq.io`;
  const txProducer = ns.producer({
    transactionalId: `${ns.prefix}cli-tx`,
    idempotent: true,
    maxInFlightRequests: 1,
  });
  await txProducer.connect();
  const tx = await txProducer.transaction();
  await tx.send({ topic: txTopic, messages: [dead(7, now), dead(8, now)] });
  await tx.commit();
  await txProducer.disconnect();
  const txTail = await kairos(p, ['--json', 'topics', 'tail', txTopic, '--from', 'beginning'], kafkaEnv);
  expect(txTail.code, txTail.stderr).toBe(0);
  expect(txTail.stdout.trim().split('\n')).toHaveLength(2);
  const again = await kairos(p, ['topics', 'tail', dlq, '--since', '1h'], kafkaEnv);
  expect(again.stdout.match(/kairos-error-class=permanent/g)).toHaveLength(3);
  expect((await kairos(p, ['dlq', 'rewind', 'nope', '--group', group, '--earliest'], kafkaEnv)).code).toBe(2);
  expect((await kairos(p, ['dlq', 'rewind', 'default', '--group', group], kafkaEnv)).code).toBe(2);

  // A group with a live consumer is not moved (exit 5): its consumer would race the move.
  const live = ns.consumer({ groupId: group });
  await live.connect();
  await live.subscribe({ topic: dlq });
  await live.run({ eachMessage: async () => {} });
  await eventually(
    'the reader to join',
    async () => (await admin.describeGroups([group])).groups[0]?.state === 'Stable',
  );
  const busy = await kairos(p, [...sinceHour, '--confirm'], kafkaEnv);
  expect(busy.code).toBe(5);
  expect(busy.stderr).toMatch(/live member/);
  await live.disconnect();
}, 120_000);
