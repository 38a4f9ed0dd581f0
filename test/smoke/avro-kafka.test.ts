import avro from 'avsc';
import { expect, test } from 'vitest';
import { AvroCodec, createRegistryClient, ensureTopics, valueSubject, wireSchemaId } from '@kairos/kafka';
import { useNamespace } from '../support/namespace.js';

const schema = {
  type: 'record',
  name: 'SmokeEvent',
  namespace: 'io.kairos.test',
  fields: [
    { name: 'id', type: 'string' },
    { name: 'n', type: 'long' },
    { name: 'note', type: ['null', 'string'], default: null },
  ],
};

test('Avro values round-trip through Kafka with the schema registered in the registry', async () => {
  const ns = await useNamespace('avro');
  const topic = `${ns.prefix}smoke.avro`;
  await ensureTopics(ns.kafka, [{ name: topic, partitions: 1, configs: {}, purpose: 'smoke test' }]);

  const registry = createRegistryClient({ url: ns.services.registryUrl });
  const codec = new AvroCodec(registry);
  ns.defer(async () => {
    await registry.deleteSubject(valueSubject(topic), false);
    await registry.deleteSubject(valueSubject(topic), true);
  });

  const producer = ns.producer();
  await producer.connect();
  const values = [
    { id: 'a', n: 1, note: null },
    { id: 'b', n: 2, note: 'two' },
  ];
  await producer.send({
    topic,
    messages: await Promise.all(
      values.map(async (v) => ({ key: v.id, value: await codec.encode(topic, schema, v) })),
    ),
  });
  await producer.disconnect();
  // The id the first encode registered the schema with.
  const id = await codec.schemaId(topic, schema);

  const consumer = ns.consumer();
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const got: { raw: Buffer; decoded: unknown }[] = [];
  await new Promise<void>((done, fail) => {
    consumer
      .run({
        eachMessage: async ({ message }) => {
          const raw = message.value!;
          got.push({ raw, decoded: await codec.decode(topic, raw) });
          if (got.length === values.length) done();
        },
      })
      .catch(fail);
  });
  await consumer.disconnect();

  expect(got.map((g) => g.decoded)).toEqual(values);
  for (const g of got) {
    // Confluent wire format: magic byte 0, then the registry's schema id.
    expect(wireSchemaId(g.raw)).toBe(id);
  }
  // A generic decoder that knows nothing but the registry (as Kafka UI does) reads the bytes.
  const fetched = await registry.getBySubjectAndId(valueSubject(topic), id);
  const type = avro.Type.forSchema(JSON.parse(fetched.schema) as avro.Schema);
  expect(type.fromBuffer(got[1]!.raw.subarray(5))).toEqual(values[1]);
});
