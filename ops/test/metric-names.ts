import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../..');

/** Not Kairos's: Prometheus's own series (alerts, scrape health) and redis_exporter's (beside the delay tier's Redis). */
export const EXTERNAL_METRICS = ['ALERTS', 'up', 'redis_memory_used_bytes', 'redis_memory_max_bytes'];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => resolve(e.parentPath, e.name));
}

/** Every `kairos_*` metric the apps and libraries register (prom-client `name: '…'`). */
export function definedMetrics(): Set<string> {
  const names = new Set<string>();
  for (const top of ['libs', 'apps']) {
    for (const pkg of readdirSync(resolve(ROOT, top))) {
      let files: string[];
      try {
        files = sourceFiles(resolve(ROOT, top, pkg, 'src'));
      } catch {
        continue; // a package without sources
      }
      for (const file of files)
        for (const m of readFileSync(file, 'utf8').matchAll(/name:\s*'(kairos_[a-z0-9_]+)'/g))
          if (m[1]) names.add(m[1]);
    }
  }
  return names;
}

const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset', 'inf', 'nan']);

/**
 * The metric names a PromQL expression selects. Strings, label matchers, ranges and grouping
 * clauses go first, then every identifier that is not a function call or a keyword is a metric.
 */
export function metricsOf(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\w+/g, ' ');
  const names = [...bare.matchAll(/(?<![\w.])[a-zA-Z_:][\w:]*(?!\w*\s*\()/g)].map((m) => m[0]);
  return names.filter((n) => !KEYWORDS.has(n.toLowerCase()));
}

/** Whether `name` is a known metric or one of a known histogram's series (`_bucket`, `_sum`, `_count`). */
export function isKnown(name: string, known: ReadonlySet<string>): boolean {
  if (known.has(name)) return true;
  const base = /^(.*)_(?:bucket|sum|count)$/.exec(name)?.[1];
  return base !== undefined && known.has(base);
}
