import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { Compatibility, RestError } from '@confluentinc/schemaregistry';
import { expect, test } from 'vitest';
import { createRegistryClient, DEFAULT_RESOURCE_CLASSES, topicNames, valueSubject } from '@kairos/kafka';
import avro from 'avsc';
import { useNamespace } from '../support/namespace.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const SCHEMA_DIR = resolve(ROOT, 'schemas');

interface Version {
  readonly label: string;
  readonly text: string;
}

/**
 * Every committed version of a schema file, oldest first, then the working copy if it differs:
 * the history a deployment may have registered. Without git (an exported tree), the working copy.
 */
function history(file: string): Version[] {
  const path = `schemas/${file}`;
  const versions: Version[] = [];
  try {
    const commits = execFileSync('git', ['log', '--format=%h', '--reverse', '--', path], {
      cwd: ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter(Boolean);
    for (const c of commits) {
      const text = execFileSync('git', ['show', `${c}:${path}`], { cwd: ROOT, encoding: 'utf8' });
      if (versions.at(-1)?.text !== text) versions.push({ label: c, text });
    }
  } catch {
    // not a git checkout: only the working copy
  }
  const current = readFileSync(resolve(SCHEMA_DIR, file), 'utf8');
  if (versions.at(-1)?.text !== current) versions.push({ label: 'working copy', text: current });
  return versions;
}

const schemaInfo = (text: string) => ({ schemaType: 'AVRO', schema: JSON.stringify(JSON.parse(text)) });

/** The production subjects each file is registered under (a deployment without a prefix). */
function productionSubjects(file: string): string[] {
  const t = topicNames('');
  const perClass = (f: (rc: string) => string) => DEFAULT_RESOURCE_CLASSES.map((rc) => valueSubject(f(rc)));
  const map: Record<string, string[]> = {
    'job-event.avsc': [valueSubject(t.jobEvents)],
    'task-dispatch.avsc': perClass(t.tasks),
    'task-result.avsc': [valueSubject(t.taskResults)],
    'dlq-entry.avsc': perClass(t.dlq),
    'schedule-request.avsc': [valueSubject(t.scheduleRequests)],
    'schedule-request-outcome.avsc': [valueSubject(t.scheduleRequestsReplies)],
    'schedule-request-rejection.avsc': [valueSubject(t.scheduleRequestsRejected)],
  };
  return map[file] ?? [];
}

test('every schema evolves backward compatibly: each version against the registered earlier ones', async () => {
  const ns = await useNamespace('schema-evolution');
  const registry = createRegistryClient({ url: ns.services.registryUrl });
  const files = readdirSync(SCHEMA_DIR).filter((f) => f.endsWith('.avsc'));
  expect(files).toContain('schedule-request.avsc');
  const checked: string[] = [];
  for (const file of files) {
    const versions = history(file);
    // A fresh subject per file in the test's namespace, registered version by version as a
    // deployment would have, with the registry enforcing the rule the ingest sets.
    const subject = `${ns.prefix}evolution.${basename(file, '.avsc')}-value`;
    for (const [i, v] of versions.entries()) {
      if (i > 0) {
        const previous = versions[i - 1]!;
        // The registry's own check (Apicurio's Confluent-compatible API) against the latest version…
        const compatible = await registry.testSubjectCompatibility(subject, schemaInfo(v.text));
        expect(compatible, `${file} ${v.label} is not backward compatible with ${previous.label}`).toBe(true);
        // …and Avro's schema resolution: the new schema reads what the old one wrote.
        const reader = avro.Type.forSchema(JSON.parse(v.text) as avro.Schema);
        expect(() =>
          reader.createResolver(avro.Type.forSchema(JSON.parse(previous.text) as avro.Schema)),
        ).not.toThrow();
      }
      await registry.register(subject, schemaInfo(v.text), false);
      if (i === 0) await registry.updateConfig(subject, { compatibility: Compatibility.BACKWARD_TRANSITIVE });
    }
    checked.push(`${file}: ${versions.map((v) => v.label).join(' → ')}`);
    // Where this registry already holds the schema for a deployment (npm start), the working copy
    // must also be compatible with what is registered there.
    for (const prod of productionSubjects(file)) {
      // (Apicurio answers "compatible" for a subject it does not have, so ask first.)
      const registered = await registry.getAllVersions(prod).catch((err: unknown) => {
        if (err instanceof RestError && err.status === 404) return [];
        throw err;
      });
      if (registered.length === 0) continue;
      const compatible = await registry.testSubjectCompatibility(prod, schemaInfo(versions.at(-1)!.text));
      expect(compatible, `${file}: not backward compatible with ${prod} as registered`).toBe(true);
      checked.push(`${file}: working copy against the registered ${prod}`);
    }
  }
  console.log(`[schema-evolution] checked\n  ${checked.join('\n  ')}`);
});

test('the check has teeth: breaking changes to the request contract are refused, a new command is not', async () => {
  const ns = await useNamespace('schema-evolution-teeth');
  const registry = createRegistryClient({ url: ns.services.registryUrl });
  const subject = `${ns.prefix}teeth.schedule-request-value`;
  const current = JSON.parse(readFileSync(resolve(SCHEMA_DIR, 'schedule-request.avsc'), 'utf8')) as {
    fields: { name: string; type: unknown }[];
  };
  await registry.register(subject, schemaInfo(JSON.stringify(current)), false);
  await registry.updateConfig(subject, { compatibility: Compatibility.BACKWARD_TRANSITIVE });
  const variant = (change: (s: typeof current) => void) => {
    const s = structuredClone(current);
    change(s);
    return schemaInfo(JSON.stringify(s));
  };
  const command = (s: typeof current) =>
    s.fields.find((f) => f.name === 'command')!.type as { name: string; fields: unknown[] }[];

  // A new required field (no default): old requests cannot be read.
  const required = variant((s) => s.fields.push({ name: 'priority', type: 'int' }));
  expect(await registry.testSubjectCompatibility(subject, required)).toBe(false);
  // A command removed from the union: old requests naming it cannot be read.
  const removed = variant((s) => command(s).pop());
  expect(await registry.testSubjectCompatibility(subject, removed)).toBe(false);
  // A new optional field, and a new command at the end of the union: both fine.
  const optional = variant((s) =>
    s.fields.push({ name: 'note', type: ['null', 'string'], default: null } as never),
  );
  expect(await registry.testSubjectCompatibility(subject, optional)).toBe(true);
  const added = variant((s) =>
    command(s).push({
      type: 'record',
      name: 'ReplayDeadLetter',
      fields: [{ name: 'dlq_entry_id', type: 'string' }],
    } as never),
  );
  expect(await registry.testSubjectCompatibility(subject, added)).toBe(true);
  // The registry refuses to register the breaking one.
  await expect(registry.register(subject, required, false)).rejects.toThrow();
});
