#!/usr/bin/env node
// npm run drill -- <name>: the seed's crisis drills on the local stack. Environment read here only.
import { resolve } from 'node:path';
import { Command } from 'commander';
import { stackConfigFromEnv } from '../config.js';
import { servicesFromEnv, stackServices } from '../services-discovery.js';
import { drillInputs } from './drill.js';
import { DRILLS } from './index.js';
import { terminalProgress } from './progress.js';
import { runDrill } from './runner.js';

const root = resolve(import.meta.dirname, '..', '..', '..');
const program = new Command('drill').description(
  'Run a crisis drill on the local stack: real processes, a real fault, a plot, a JSON record and a PASS/FAIL line',
);

for (const drill of DRILLS) {
  const cmd = program
    .command(drill.name)
    .description(drill.summary)
    .option('--seed <n>', 'seed of the drill’s random choices (default: random)')
    .option('--out <dir>', 'where <drill>.json and <drill>.png go', resolve(root, '.kairos', 'drills'))
    .option(
      '--profile <dir>',
      'write a CPU profile (.cpuprofile) of every app the drill starts under <dir>/<app>',
    );
  for (const o of drill.options)
    cmd.option(`--${o.name} <n>`, `${o.description} (${o.min}–${o.max})`, String(o.default));
  cmd.action(async (opts: Record<string, string | undefined>) => {
    const inputs = drillInputs(drill, opts);
    const seed = opts.seed === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(opts.seed);
    if (!Number.isInteger(seed) || seed < 0)
      throw new RangeError(`--seed must be a non-negative integer, got ${opts.seed}`);
    // The services the KAIROS_* variables name, else the local stack (it must be up: a drill never starts it).
    const services = servicesFromEnv(process.env) ?? stackServices(stackConfigFromEnv(root));
    const outDir = resolve(opts.out ?? '.');
    const record = await runDrill(drill, {
      services,
      seed,
      outDir,
      inputs,
      progress: terminalProgress(drill.name),
      ...(opts.profile === undefined ? {} : { profileDir: resolve(opts.profile) }),
    });
    console.log(
      `record: ${resolve(outDir, `${drill.name}.json`)}  plot: ${resolve(outDir, `${drill.name}.png`)}  (${(record.durationMs / 1000).toFixed(0)} s, seed ${seed})`,
    );
    console.log(record.verdict);
    process.exitCode = record.pass ? 0 : 1;
  });
}

program.parseAsync(process.argv).catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
