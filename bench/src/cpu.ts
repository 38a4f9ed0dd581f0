import { readFileSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';

const TICKS = 100; // USER_HZ on Linux

function procStat(pid: number): { ppid: number; ticks: number } | undefined {
  try {
    const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = raw.slice(raw.lastIndexOf(')') + 2).split(' ');
    // utime + stime + cutime + cstime: a reaped child's time moves into its parent's cutime, so
    // the tree's sum never drops when a PostgreSQL backend or worker process exits.
    return {
      ppid: Number(fields[1]),
      ticks: Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]),
    };
  } catch {
    return undefined;
  }
}

/** The stack's service pids from the pid files of the local stack in `dataDir` (empty for external services). */
export function stackPids(dataDir: string): number[] {
  return [...stackPidsByName(dataDir).values()];
}

type Sample = Map<number, { ppid: number; ticks: number }>;

/**
 * The processes in the trees rooted at `roots` plus this process (PostgreSQL backends, the JVMs,
 * Redis, spawned workers), minus the trees rooted at `exclude`: a stack the bench started is its
 * child, so a system that does not use a service must exclude it. Everything shares two cores,
 * so the benchmark reports CPU per job next to throughput.
 */
export function cpuSample(roots: readonly number[], exclude: readonly number[] = []): Sample {
  const all: Sample = new Map();
  for (const d of readdirSync('/proc')) {
    const pid = Number(d);
    if (!Number.isInteger(pid)) continue;
    const s = procStat(pid);
    if (s) all.set(pid, s);
  }
  const inTree = (pid: number): boolean => {
    for (let p: number | undefined = pid, hops = 0; p !== undefined && p > 1 && hops < 64; hops++) {
      if (roots.includes(p)) return true;
      if (exclude.includes(p)) return false;
      if (p === process.pid) return true;
      p = all.get(p)?.ppid;
    }
    return false;
  };
  const tree: Sample = new Map();
  for (const [pid, s] of all) if (inTree(pid)) tree.set(pid, s);
  return tree;
}

/**
 * CPU seconds used between two samples, per process so that an exit cannot make it negative.
 * A process that exited between them was reaped by its parent if that parent is still there:
 * the parent's cutime then holds the child's whole life, so the child's time before the window
 * is taken off again. An orphan's time in the window is lost (counted as zero).
 */
export function cpuSecondsBetween(before: Sample, after: Sample): number {
  let ticks = 0;
  for (const [pid, s] of after) {
    const prior = before.get(pid)?.ticks ?? 0;
    ticks += s.ticks >= prior ? s.ticks - prior : s.ticks; // lower means the pid was reused
  }
  for (const [pid, s] of before) {
    if (!after.has(pid) && after.has(s.ppid)) ticks -= s.ticks;
  }
  return Math.max(0, ticks) / TICKS;
}

/**
 * The local stack's service pids by service name (postgres, redis, kafka, connect, registry), from
 * its data folder (`stackConfigFromEnv(ROOT).dataDir`: `.kairos`, or KAIROS_STACK_DIR).
 */
export function stackPidsByName(dataDir: string): Map<string, number> {
  const run = resolve(dataDir, 'run');
  const out = new Map<string, number>();
  try {
    for (const f of readdirSync(run).filter((name) => name.endsWith('.pid'))) {
      const pid = Number(readFileSync(resolve(run, f), 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0) out.set(f.slice(0, -'.pid'.length), pid);
    }
  } catch {
    // not the local stack: external services are not measured
  }
  return out;
}

/** What a process is, for a CPU breakdown: a Kairos app, a worker, a service or this bench. */
export function processLabel(pid: number, services: ReadonlyMap<string, number>): string {
  for (const [name, root] of services) if (root === pid) return name;
  let cmd: string;
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return 'exited';
  }
  const app = /apps\/([a-z-]+)\/src\/main\.ts/.exec(cmd)?.[1];
  if (app) return app;
  if (cmd.includes('worker-process')) return 'worker';
  if (pid === process.pid) return 'bench (and in-process workers)';
  if (cmd.startsWith('postgres')) return 'postgres';
  return cmd.split(' ')[0] ?? 'other';
}

/** CPU seconds per label between two samples (labels from processLabel, a child under its app). */
export function cpuByLabel(
  before: Sample,
  after: Sample,
  label: (pid: number) => string,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const [pid, s] of after) {
    const prior = before.get(pid)?.ticks ?? 0;
    const ticks = s.ticks >= prior ? s.ticks - prior : s.ticks;
    const name = label(pid);
    out.set(name, (out.get(name) ?? 0) + ticks / TICKS);
  }
  return out;
}

/** Who a process is, for a per-component split: a stack service, a Kairos app, a worker, Redis, the bench. */
const KNOWN = /^(api|delay-tier|tracker|ingest|worker|postgres|bench)/;

/**
 * A process's component: its own label when it is a known one, else its parent's (tsx's esbuild
 * helper belongs to the app that started it); a Redis server (a cluster node too) is `redis`.
 */
export function componentLabel(services: ReadonlyMap<string, number>, sample: Sample) {
  return (pid: number): string => {
    let label = processLabel(pid, services);
    for (let p = sample.get(pid)?.ppid, hops = 0; p !== undefined && hops < 8; hops++) {
      if (label.includes('redis-server')) return 'redis';
      if (KNOWN.test(label) || services.has(label)) return label;
      label = processLabel(p, services);
      p = sample.get(p)?.ppid;
    }
    return label.includes('redis-server') ? 'redis' : label;
  };
}

/**
 * CPU seconds per component over `seconds`, less what each used idle at the rate of a quiet
 * window (`idle` over `idleSeconds`) just before: what remains is the cost of the work.
 */
export function netOfIdle(
  gross: ReadonlyMap<string, number>,
  seconds: number,
  idle: ReadonlyMap<string, number>,
  idleSeconds: number,
): Map<string, number> {
  return new Map(
    [...gross].map(([k, v]) => [k, Math.max(0, v - ((idle.get(k) ?? 0) / idleSeconds) * seconds)]),
  );
}
