import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import type { Adapter } from './adapter.js';
import { KairosAdapter } from './adapters/kairos.js';
import { peerAdapters } from './adapters/peers.js';
import { stackPids } from './cpu.js';
import { machine, writeReport } from './report.js';
import { benchServices, ROOT, stackDir } from './services.js';
import { warmUp, type Measurement, type Size, type Workload } from './workload.js';
import { crash } from './workloads/crash.js';
import { delay } from './workloads/delay.js';
import { drain } from './workloads/drain.js';
import { enqueue } from './workloads/enqueue.js';
import { failover } from './workloads/failover.js';
import { hops } from './workloads/hops.js';
import { idle } from './workloads/idle.js';
import { latency } from './workloads/latency.js';
import { leases } from './workloads/leases.js';
import { scale } from './workloads/scale.js';
import { services as serviceCounts } from './workloads/services.js';
import { tier } from './workloads/tier.js';

const WORKLOADS: readonly Workload[] = [
  enqueue,
  drain,
  latency,
  delay,
  hops,
  crash,
  tier,
  leases,
  idle,
  failover,
  scale,
  serviceCounts,
];
const log = (line: string) => console.log(`${new Date().toISOString().slice(11, 19)} ${line}`);

function adapters(names: readonly string[]): Adapter[] {
  const all = [new KairosAdapter(), ...peerAdapters()];
  const unknown = names.filter((n) => !all.some((a) => a.name === n));
  if (unknown.length)
    throw new Error(`unknown system(s) ${unknown.join(', ')}; one of ${all.map((a) => a.name).join(', ')}`);
  return all.filter((a) => names.includes(a.name));
}

const ALL_SYSTEMS = 'kairos,bullmq,pg-boss,graphile-worker';

const program = new Command('bench')
  .description('Kairos side by side with BullMQ, pg-boss and Graphile Worker')
  .argument(
    '<workload>',
    `${WORKLOADS.map((w) => [w.id, ...(w.aliases ?? [])].join(' or ')).join(' | ')} | all`,
  )
  .addOption(new Option('--size <size>', 'job counts').choices(['small', 'full']).default('small'))
  .option('--runs <n>', 'measured runs per cell (median reported); default 1 small, 3 full')
  .option('--systems <list>', 'comma-separated systems', ALL_SYSTEMS)
  .option('--out <dir>', 'results folder; default bench/results/full, or bench/results/tmp/<size>')
  .option('--concurrency <list>', 'W2 drain: comma-separated worker concurrency levels', '1,24,100')
  .option('--merge', 'keep the results already in the folder, replacing only the workloads run now')
  .option(
    '--profile <dir>',
    'Kairos: run every app and worker process with node --cpu-prof, profiles in <dir>/<workload>-<app>-*.cpuprofile (see bench/src/profile-summary.ts)',
  )
  .action(
    async (
      which: string,
      opts: {
        size: Size;
        runs?: string;
        systems: string;
        out?: string;
        merge?: boolean;
        profile?: string;
        concurrency: string;
      },
    ) => {
      const workloads =
        which === 'all'
          ? WORKLOADS.filter((w) => !w.byNameOnly)
          : WORKLOADS.filter((w) => w.id === which || w.aliases?.includes(which));
      if (workloads.length === 0) throw new Error(`unknown workload "${which}"`);
      const runs = Number(opts.runs ?? (opts.size === 'full' ? 3 : 1));
      if (!Number.isInteger(runs) || runs < 1)
        throw new Error(`--runs must be a positive integer, got ${opts.runs}`);
      const concurrency = opts.concurrency.split(',').map((c) => Number(c.trim()));
      if (concurrency.some((c) => !Number.isInteger(c) || c < 1))
        throw new Error(`--concurrency must list positive integers, got ${opts.concurrency}`);
      const systems = adapters(opts.systems.split(',').map((s) => s.trim()));
      const profileDir = opts.profile === undefined ? undefined : resolve(opts.profile);
      const services = await benchServices(ROOT, log);
      const cpuRoots = stackPids(stackDir(ROOT));
      // Another checkout run against this stack (KAIROS_* URLs) finds no pid files of its own: its
      // CPU per job would leave the services out, a third of the total or more.
      if (cpuRoots.length === 0)
        log(
          `warning: no service pids in ${stackDir(ROOT)}: CPU per 1,000 jobs counts the apps only; set KAIROS_STACK_DIR to the stack's folder to count its services too`,
        );
      const t0 = Date.now();
      const raw: Measurement[] = [];
      const failures: string[] = [];
      const out = resolve(
        opts.out ??
          (opts.size === 'full'
            ? resolve(ROOT, 'bench/results/full')
            : resolve(ROOT, `bench/results/tmp/${opts.size}`)),
      );
      // --merge: earlier results of the other workloads (and of systems not rerun) stay.
      const rerun = new Set(workloads.map((w) => w.id.toUpperCase()));
      const kept: Measurement[] =
        opts.merge && existsSync(resolve(out, 'results.json'))
          ? (
              JSON.parse(readFileSync(resolve(out, 'results.json'), 'utf8')) as { raw: Measurement[] }
            ).raw.filter((m) => !rerun.has(m.workload) || !systems.some((a) => a.name === m.system))
          : [];
      raw.push(...kept);
      const report = async () =>
        writeReport(out, raw, {
          size: opts.size,
          runs,
          date: new Date().toISOString(),
          machine: machine(),
          command: `npm run bench -- ${which} --size ${opts.size}${opts.runs ? ` --runs ${opts.runs}` : ''}${opts.systems === ALL_SYSTEMS ? '' : ` --systems ${opts.systems}`}${opts.concurrency === '1,24,100' ? '' : ` --concurrency ${opts.concurrency}`}`,
          seconds: (Date.now() - t0) / 1000,
          failures,
        });
      for (const w of workloads) {
        for (let run = 1; run <= runs; run++) {
          // Systems alternate within each run, on the same services.
          for (const adapter of systems.filter((a) => !w.only || w.only.includes(a.name))) {
            const env = { ...services, namespace: randomBytes(4).toString('hex') };
            if (adapter instanceof KairosAdapter) adapter.profileAs(profileDir && resolve(profileDir, w.id));
            log(`${w.title}: ${adapter.name}, run ${run}/${runs}`);
            try {
              if (!w.ownSetup) {
                await adapter.setup(env);
                await warmUp(adapter);
              }
              const rows = await w.run({ adapter, env, size: opts.size, cpuRoots, log, concurrency });
              raw.push(...rows);
              for (const r of rows) {
                log(
                  `  ${r.variant} ${r.metric}: ${r.value.toFixed(1)} ${r.unit}${r.lost !== undefined ? ` (lost ${r.lost}, dup ${r.duplicated})` : ''}`,
                );
              }
            } catch (err) {
              // One failing cell must not cost the whole run: record it and go on.
              failures.push(
                `${w.title} / ${adapter.name} / run ${run}: ${err instanceof Error ? err.message : String(err)}`,
              );
              log(`  FAILED: ${failures.at(-1)}`);
            } finally {
              await adapter.teardown().catch((err: unknown) => log(`  teardown failed: ${String(err)}`));
            }
          }
        }
        await report(); // results so far survive an interrupted run
      }
      const { summary, files } = await report();
      if (failures.length > 0) process.exitCode = 1;
      console.log(`\n${summary}`);
      log(`wrote ${files.length} files to ${out} in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    },
  );

program.parseAsync(process.argv).then(
  () => process.exit(process.exitCode ?? 0),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
