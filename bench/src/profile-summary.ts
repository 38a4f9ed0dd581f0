/**
 * Summarises the CPU profiles of `npm run bench -- <w> --profile <dir>`: per process folder
 * (`<dir>/<workload>/<app>#<n>/*.cpuprofile`), the busy share of the sampled time and the
 * functions with the most self time (what a flame graph's widest leaves show). Markdown on stdout:
 *   npx tsx bench/src/profile-summary.ts <dir> [top]
 * Open a .cpuprofile in Chrome DevTools or speedscope for the whole flame graph.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { functionName: string; url: string; lineNumber: number };
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

const IDLE = new Set(['(idle)', '(program)']);

function frameName(n: ProfileNode): string {
  const { functionName, url, lineNumber } = n.callFrame;
  if (url === '') return functionName || '(anonymous)';
  const file = url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '');
  const short = file.includes('/work/') ? file.replace(/^.*?\/(apps|libs|bench|ops)\//, '$1/') : file;
  return `${functionName || '(anonymous)'} ${short}:${lineNumber + 1}`;
}

/** Self time per frame (µs) of one or more profiles. */
function selfTimes(files: readonly string[]): { total: number; byFrame: Map<string, number> } {
  const byFrame = new Map<string, number>();
  let total = 0;
  for (const file of files) {
    const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
    const nodes = new Map(p.nodes.map((n) => [n.id, n]));
    p.samples.forEach((id, i) => {
      const dt = p.timeDeltas[i] ?? 0;
      const node = nodes.get(id);
      if (!node) return;
      total += dt;
      const name = frameName(node);
      byFrame.set(name, (byFrame.get(name) ?? 0) + dt);
    });
  }
  return { total, byFrame };
}

function profileFolders(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (!statSync(path).isDirectory()) continue;
    if (readdirSync(path).some((f) => f.endsWith('.cpuprofile'))) out.push(path);
    else out.push(...profileFolders(path));
  }
  return out.sort();
}

const [dir, topArg] = process.argv.slice(2);
if (!dir) throw new Error('usage: profile-summary.ts <dir> [top]');
const top = Number(topArg ?? 12);
for (const folder of profileFolders(dir)) {
  const files = readdirSync(folder)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(folder, f));
  const { total, byFrame } = selfTimes(files);
  const busy = [...byFrame].filter(([name]) => !IDLE.has(name)).reduce((a, [, t]) => a + t, 0);
  console.log(`\n### ${relative(dir, folder)}\n`);
  console.log(
    `${(total / 1e6).toFixed(1)} s sampled, busy ${((100 * busy) / Math.max(1, total)).toFixed(1)} %\n`,
  );
  console.log('| self % of busy | self ms | function |\n| --- | --- | --- |');
  const rows = [...byFrame].filter(([name]) => !IDLE.has(name)).sort((a, b) => b[1] - a[1]);
  for (const [name, t] of rows.slice(0, top)) {
    console.log(`| ${((100 * t) / Math.max(1, busy)).toFixed(1)} | ${(t / 1000).toFixed(0)} | \`${name}\` |`);
  }
}
