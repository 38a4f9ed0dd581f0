import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { definedMetrics, isKnown, metricsOf } from './metric-names.js';

const K8S = resolve(import.meta.dirname, '../k8s');

/** Every document of a manifest, parsed strictly (any YAML error fails). */
function manifests(file: string): Record<string, unknown>[] {
  const docs = parseAllDocuments(readFileSync(resolve(K8S, file), 'utf8'));
  for (const d of docs) expect(d.errors, file).toEqual([]);
  return docs.map((d) => d.toJS() as Record<string, unknown>);
}

test('the KEDA example scales a worker on the 5-minute forecast, with queries on Kairos metrics', () => {
  const [scaled] = manifests('keda-worker-scaledobject.yaml');
  expect(scaled).toMatchObject({ apiVersion: 'keda.sh/v1alpha1', kind: 'ScaledObject' });
  const spec = scaled?.spec as {
    triggers: { type: string; metadata: { query: string; threshold: string } }[];
  };
  const queries = spec.triggers.map((t) => t.metadata.query);
  expect(spec.triggers.every((t) => t.type === 'prometheus' && Number(t.metadata.threshold) > 0)).toBe(true);
  expect(queries[0]).toMatch(/kairos_jobs_due\{resource_class="io",window="5m"\}/);
  const known = new Set(definedMetrics());
  expect(queries.flatMap(metricsOf).filter((n) => !isKnown(n, known))).toEqual([]);
});

test('the HPA example reads the forecast as an external metric', () => {
  const [hpa] = manifests('hpa-worker-external-metric.yaml');
  expect(hpa).toMatchObject({
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    spec: { metrics: [{ type: 'External', external: { metric: { name: 'kairos_jobs_due_5m' } } }] },
  });
});
