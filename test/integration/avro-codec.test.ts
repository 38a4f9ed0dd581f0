import {
  AvroDeserializer,
  AvroSerializer,
  Compatibility,
  RestError,
  SerdeType,
  TopicNameStrategy,
  type Client,
} from '@confluentinc/schemaregistry';
import { expect, test } from 'vitest';
import { AvroCodec, createRegistryClient, setCompatibility, valueSubject, wireSchemaId } from '@kairos/kafka';
import { useNamespace } from '../support/namespace.js';
import type { Namespace } from '../support/namespace.js';

const v1 = {
  type: 'record',
  name: 'CodecEvent',
  namespace: 'io.kairos.test',
  fields: [{ name: 'id', type: 'string' }],
};
/** Not readable by v1's readers (a new field without a default). */
const incompatible = { ...v1, fields: [...v1.fields, { name: 'n', type: 'long' }] };

/** The real registry client, counting the registrations it is asked for. */
function countingRegistry(ns: Namespace): { client: Client; registrations: () => number } {
  const client = createRegistryClient({ url: ns.services.registryUrl });
  let registrations = 0;
  const register = client.register.bind(client);
  client.register = (...args: Parameters<Client['register']>) => {
    registrations++;
    return register(...args);
  };
  return { client, registrations: () => registrations };
}

/** A fresh topic name (nothing needs the topic itself: only its subject) and its cleanup. */
function freshTopic(ns: Namespace, registry: Client, name: string): string {
  const topic = `${ns.prefix}codec.${name}`;
  ns.defer(async () => {
    await registry.deleteSubject(valueSubject(topic), false).catch(() => undefined);
    await registry.deleteSubject(valueSubject(topic), true).catch(() => undefined);
  });
  return topic;
}

const versions = (registry: Client, subject: string) =>
  registry.getAllVersions(subject).catch((err: unknown) => {
    if (err instanceof RestError && err.status === 404) return [];
    throw err;
  });

test('the first encode registers the schema under <topic>-value and writes with its id', async () => {
  const ns = await useNamespace('codec-first');
  const { client, registrations } = countingRegistry(ns);
  const topic = freshTopic(ns, client, 'first');
  expect(await versions(client, valueSubject(topic))).toEqual([]);

  const codec = new AvroCodec(client);
  const bytes = await codec.encode(topic, v1, { id: 'a' });
  const latest = await client.getLatestSchemaMetadata(valueSubject(topic));
  expect(wireSchemaId(bytes)).toBe(latest.id);
  expect(await codec.decode(topic, bytes)).toEqual({ id: 'a' });

  // Memoised: later encodes (and the schema's id) cost no registration.
  await codec.encode(topic, v1, { id: 'b' });
  await codec.encode(topic, JSON.stringify(v1), { id: 'c' });
  expect(await codec.schemaId(topic, v1)).toBe(latest.id);
  expect(registrations()).toBe(1);
});

test('concurrent first encodes share one registration', async () => {
  const ns = await useNamespace('codec-concurrent');
  const { client, registrations } = countingRegistry(ns);
  const topic = freshTopic(ns, client, 'concurrent');
  const codec = new AvroCodec(client);
  const all = await Promise.all(
    Array.from({ length: 50 }, (_, i) => codec.encode(topic, v1, { id: `${i}` })),
  );
  expect(registrations()).toBe(1);
  expect(new Set(all.map(wireSchemaId)).size).toBe(1);
  expect(await versions(client, valueSubject(topic))).toHaveLength(1);
});

test('a failed registration is not memoised: the next encode registers again', async () => {
  const ns = await useNamespace('codec-retry');
  const { client, registrations } = countingRegistry(ns);
  const topic = freshTopic(ns, client, 'retry');
  const subject = valueSubject(topic);
  // The subject holds v1 under a rule the next schema breaks: the registry refuses it.
  await client.register(subject, { schemaType: 'AVRO', schema: JSON.stringify(v1) }, false);
  await client.updateConfig(subject, { compatibility: Compatibility.BACKWARD_TRANSITIVE });
  const before = registrations();

  const codec = new AvroCodec(client);
  await expect(codec.encode(topic, incompatible, { id: 'a', n: 1 })).rejects.toThrow();
  await expect(codec.encode(topic, incompatible, { id: 'a', n: 1 })).rejects.toThrow();
  expect(registrations() - before).toBe(2);

  // Once the registry accepts it, the same codec registers and writes with the new id.
  await client.updateConfig(subject, { compatibility: Compatibility.NONE });
  const bytes = await codec.encode(topic, incompatible, { id: 'a', n: 1 });
  expect(registrations() - before).toBe(3);
  expect(wireSchemaId(bytes)).toBe((await client.getLatestSchemaMetadata(subject)).id);
  expect(await codec.decode(topic, bytes)).toEqual({ id: 'a', n: 1 });
});

test("values are byte for byte what Confluent's serializer writes, and each side reads the other's", async () => {
  const ns = await useNamespace('codec-wire');
  const { client } = countingRegistry(ns);
  const topic = freshTopic(ns, client, 'wire');
  const schema = {
    type: 'record',
    name: 'CodecWire',
    namespace: 'io.kairos.test',
    fields: [
      { name: 'id', type: 'string' },
      { name: 'due_at', type: { type: 'long', logicalType: 'timestamp-millis' } },
      {
        name: 'deadline_at',
        type: ['null', { type: 'long', logicalType: 'timestamp-millis' }],
        default: null,
      },
      { name: 'payload', type: 'bytes' },
      { name: 'state', type: { type: 'enum', name: 'CodecState', symbols: ['A', 'B'] } },
    ],
  };
  const value = {
    id: 'j-1',
    due_at: 1_767_225_600_000,
    deadline_at: null,
    payload: Buffer.from('{}'),
    state: 'B',
  };
  const codec = new AvroCodec(client);
  const ours = await codec.encode(topic, schema, value);
  const theirs = await new AvroSerializer(client, SerdeType.VALUE, {
    useSchemaId: wireSchemaId(ours),
    autoRegisterSchemas: false,
    subjectNameStrategy: TopicNameStrategy,
  }).serialize(topic, value);
  expect(ours.equals(theirs)).toBe(true);
  const deserializer = new AvroDeserializer(client, SerdeType.VALUE, {
    subjectNameStrategy: TopicNameStrategy,
  });
  expect({ ...((await deserializer.deserialize(topic, ours)) as object) }).toEqual(value);
  expect({ ...((await new AvroCodec(client).decode(topic, theirs)) as object) }).toEqual(value);
});

test("processes setting a subject's compatibility at once all succeed (the registry refuses a concurrent rule creation)", async () => {
  const ns = await useNamespace('codec-compat');
  const clients = Array.from({ length: 6 }, () => createRegistryClient({ url: ns.services.registryUrl }));
  const first = clients[0]!;
  for (let round = 0; round < 5; round++) {
    const topic = freshTopic(ns, first, `compat${round}`);
    await first.register(valueSubject(topic), { schemaType: 'AVRO', schema: JSON.stringify(v1) }, false);
    await Promise.all(
      clients.map((c) => setCompatibility(c, valueSubject(topic), Compatibility.BACKWARD_TRANSITIVE)),
    );
    expect((await first.getConfig(valueSubject(topic))).compatibilityLevel).toBe(
      Compatibility.BACKWARD_TRANSITIVE,
    );
  }
});
