import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { expect, test } from 'vitest';
import { parse, stringify } from 'yaml';
import { canaryStalledAlert, SLA_ALERT } from '@kairos/core';
import { checkPrerequisites } from '../src/prereqs.js';
import { definedMetrics, EXTERNAL_METRICS, isKnown, metricsOf } from './metric-names.js';

// A page that points at nothing is worse than none at 3 AM: every alert has its runbook, every
// runbook's links, metrics and tables exist. (The kairos commands they cite: apps/cli/test.)
const ROOT = resolve(import.meta.dirname, '../..');
const RUNBOOKS = resolve(ROOT, 'ops/runbooks');
const read = (path: string) => readFileSync(path, 'utf8');

interface Rule {
  readonly alert: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels: { readonly severity: string };
  readonly annotations: Readonly<Record<string, string>>;
}
const rules = (
  parse(read(resolve(ROOT, 'ops/prometheus/alerts.yml'))) as { groups: { rules: Rule[] }[] }
).groups.flatMap((g) => g.rules);

/** Alerts Kairos raises without Prometheus: the tracker's webhook and the overview (`postgres_only`). */
const OWN_ALERTS = [canaryStalledAlert('io', 1000).name, SLA_ALERT, 'postgres_only'];
/** The crash drills of issue 17 (`npm run drill -- <name>`). */
const DRILLS = [
  'redis-oom',
  'zombie-worker',
  'retry-storm',
  'split-brain',
  'midnight-herd',
  'dispatcher-crash',
];

const pages = readdirSync(RUNBOOKS).filter((f) => f.endsWith('.md'));
const pageText = (file: string) => read(resolve(RUNBOOKS, file));

/** The bodies of a page's fenced blocks in `lang`. */
const blocks = (text: string, lang: string) =>
  [...text.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```', 'gm'))].map((m) => m[1] ?? '');

/** Relative link targets of a Markdown page (no URLs, no anchors within the page). */
const links = (text: string) =>
  [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => (m[1] ?? '').split('#')[0] ?? '')
    .filter((t) => t !== '' && !/^[a-z]+:/.test(t));

/** Tables every migration creates. */
function migrationTables(): Set<string> {
  const dir = resolve(ROOT, 'libs/db/migrations');
  const sql = readdirSync(dir).map((f) => read(resolve(dir, f)));
  return new Set(
    sql.flatMap((s) => [...s.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+)/gi)].map((m) => m[1] ?? '')),
  );
}

/** The relations a SQL text reads or writes (after FROM, JOIN, UPDATE, INTO). */
const relationsOf = (sql: string) =>
  [...sql.matchAll(/\b(?:from|join|update|into)\s+([a-z_][\w.]*)/gi)].map((m) => (m[1] ?? '').toLowerCase());

test('every alert rule has a runbook_url naming its page, and the page shows its expression and severity', () => {
  expect(rules.length).toBe(16);
  for (const r of rules) {
    expect(r.annotations.runbook_url, r.alert).toBe(`ops/runbooks/${r.alert}.md`);
    const page = resolve(ROOT, r.annotations.runbook_url ?? '');
    expect(existsSync(page), `${r.alert}: ${page}`).toBe(true);
    const text = read(page);
    expect(text, r.alert).toMatch(new RegExp(`^# ${r.alert}$`, 'm'));
    expect(text, r.alert).toContain(`severity \`${r.labels.severity}\``);
    const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
    expect(squash(blocks(text, 'promql')[0] ?? ''), r.alert).toBe(squash(r.expr));
  }
});

test("Kairos' own alerts and every drill have a page, and the index lists every page", () => {
  for (const name of OWN_ALERTS) expect(pages, name).toContain(`${name}.md`);
  for (const drill of DRILLS) {
    expect(pages, drill).toContain(`drill-${drill}.md`);
    expect(pageText(`drill-${drill}.md`)).toContain(`npm run drill -- ${drill}`);
  }
  const index = links(pageText('README.md'));
  for (const page of pages.filter((p) => p !== 'README.md')) expect(index, page).toContain(page);
});

test('every relative link of a runbook names a file that exists', () => {
  const missing = pages.flatMap((page) =>
    links(pageText(page))
      .filter((target) => !existsSync(resolve(RUNBOOKS, target)))
      .map((target) => `${page} → ${target}`),
  );
  expect(missing).toEqual([]);
  expect(links('[a](x.md#y) [b](https://e.org/z.md) [c](#local) [d](../p.yml)')).toEqual([
    'x.md',
    '../p.yml',
  ]);
  expect(dirname(RUNBOOKS)).toBe(resolve(ROOT, 'ops'));
});

test('runbooks query only metrics Kairos defines and tables its migrations create', () => {
  const known = new Set([...definedMetrics(), ...EXTERNAL_METRICS]);
  const tables = migrationTables();
  expect(tables).toContain('partition_epochs');
  const unknown: string[] = [];
  for (const page of pages) {
    const text = pageText(page);
    for (const expr of blocks(text, 'promql'))
      for (const name of metricsOf(expr)) if (!isKnown(name, known)) unknown.push(`${page}: metric ${name}`);
    // SQL blocks, and the one-liners given to psql -c in shell blocks.
    const sql = [
      ...blocks(text, 'sql'),
      ...[...text.matchAll(/psql [^\n]*? -c "([^"]+)"/g)].map((m) => m[1] ?? ''),
    ];
    for (const rel of sql.flatMap(relationsOf))
      if (!tables.has(rel) && !rel.startsWith('pg_')) unknown.push(`${page}: table ${rel}`);
  }
  expect(unknown).toEqual([]);
  expect(relationsOf("SELECT a FROM jobs j JOIN schedule_health h ON true WHERE x = 'y'")).toEqual([
    'jobs',
    'schedule_health',
  ]);
});

/** A PromQL block's expressions: one a line, an indented line continuing the one before. */
const expressionsOf = (block: string) =>
  block.split('\n').reduce<string[]>((acc, line) => {
    if (/^\s/.test(line) && acc.length > 0) acc[acc.length - 1] += ` ${line.trim()}`;
    else if (line.trim() !== '') acc.push(line.trim());
    return acc;
  }, []);

test('every PromQL expression of the runbooks parses (promtool, as recording rules)', () => {
  checkPrerequisites(['alert-rules'], () => undefined);
  const exprs = pages.flatMap((p) => blocks(pageText(p), 'promql').flatMap(expressionsOf));
  expect(exprs.length).toBeGreaterThan(40);
  const dir = mkdtempSync(join(tmpdir(), 'kairos-runbooks-'));
  try {
    const rules = exprs.map((expr, i) => ({ record: `runbook:expr_${i}`, expr }));
    writeFileSync(join(dir, 'runbooks.yml'), stringify({ groups: [{ name: 'runbooks', rules }] }));
    const out = execFileSync('promtool', ['check', 'rules', 'runbooks.yml'], { cwd: dir, encoding: 'utf8' });
    expect(out).toContain(`SUCCESS: ${exprs.length} rules found`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);
