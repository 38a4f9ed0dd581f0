#!/usr/bin/env node
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command } from 'commander';
import { localKeyFile } from './api-keys.js';
import { bootstrap } from './bootstrap.js';
import { optionalServices, serviceUrls, stackConfigFromEnv, type StackConfig } from './config.js';
import { MissingPrerequisite } from './prereqs.js';
import { formatStates } from './print.js';
import { prune } from './prune.js';
import { serviceByName } from './services/index.js';
import { down, logFileFor, reset, status, up } from './stack.js';
import { start } from './start.js';

// The environment is read here, at the entry point, and nowhere else.
const root = resolve(import.meta.dirname, '..', '..');
const cfg = stackConfigFromEnv(root);
const log = (line: string) => console.log(line);

const program = new Command('stack').description('Kairos local stack: real services, no Docker');

/** cfg with the optional services of `--with a,b` added to KAIROS_STACK_WITH's. */
const withOptional = (names: string | undefined): StackConfig =>
  names === undefined
    ? cfg
    : { ...cfg, optional: [...new Set([...cfg.optional, ...optionalServices(names, '--with')])] };
const WITH_HELP = 'optional services to run too, comma-separated: prometheus (or KAIROS_STACK_WITH)';

program
  .command('up')
  .description('start every service that is not healthy yet, create topics, register connectors')
  .option('--with <services>', WITH_HELP)
  .action(async (opts: { with?: string }) => {
    const t0 = Date.now();
    const states = await up(withOptional(opts.with), log);
    await bootstrap(cfg, log);
    console.log(formatStates(states));
    console.log(
      `stack up in ${((Date.now() - t0) / 1000).toFixed(1)} s; logs in ${resolve(cfg.dataDir, 'logs')}`,
    );
  });

program
  .command('start')
  .description('the stack, every app and a small demo; runs until Ctrl-C')
  .option('--no-demo', 'skip the demo jobs')
  .option('--api-port <port>', 'HTTP API port', process.env.KAIROS_API_PORT ?? '58090')
  .option('--with <services>', WITH_HELP)
  .action((opts: { demo: boolean; apiPort: string; with?: string }) =>
    start(withOptional(opts.with), log, { demo: opts.demo, apiPort: Number(opts.apiPort) }),
  );

program
  .command('status')
  .description('health, pid, memory and address of each service')
  .action(async () => {
    const states = await status(cfg);
    console.log(formatStates(states));
    if (states.some((s) => !s.healthy)) process.exitCode = 1;
  });

program
  .command('down')
  .argument('[services...]', 'only these (e.g. kafka-cluster); default: all')
  .description('stop every process the stack started, or only the named services')
  .action((names: string[]) =>
    down(cfg, log, names.length > 0 ? names.map((n) => serviceByName(n).name) : undefined),
  );

program
  .command('reset')
  .description('stop everything and delete all data and logs (the jar cache stays)')
  .action(() => reset(cfg, log));

program
  .command('prune')
  .description('remove outbox connectors and slots that killed tests or benchmarks left behind')
  .action(async () => {
    const n = await prune(cfg, log);
    console.log(n === 0 ? 'nothing to prune' : `pruned ${n} connector(s)`);
  });

program
  .command('logs')
  .argument(
    '<service>',
    'postgres | redis | kafka | connect | registry | prometheus | redis-cluster | kafka-cluster',
  )
  .option('-f, --follow', 'keep following the log')
  .option('-n, --lines <n>', 'lines to show', '100')
  .description('show the log of one service')
  .action((name: string, opts: { follow?: boolean; lines: string }) => {
    const file = logFileFor(cfg, serviceByName(name).name);
    if (!existsSync(file)) throw new Error(`no log yet at ${file}`);
    const tail = spawn('tail', ['-n', opts.lines, ...(opts.follow ? ['-f'] : []), file], {
      stdio: 'inherit',
    });
    return new Promise<void>((done) => tail.on('exit', () => done()));
  });

program
  .command('env')
  .description('print the KAIROS_* variables that point clients, apps and tests at this stack')
  .option('--with <services>', WITH_HELP)
  .action((opts: { with?: string }) => {
    for (const [k, v] of Object.entries(serviceUrls(withOptional(opts.with))))
      console.log(`export ${k}=${v}`);
    // The local admin key, once `npm start` has made it; the kairos CLI reads KAIROS_API_KEY.
    const keyFile = localKeyFile(cfg.dataDir);
    if (existsSync(keyFile)) console.log(`export KAIROS_API_KEY=${readFileSync(keyFile, 'utf8').trim()}`);
  });

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof MissingPrerequisite) console.error(err.message);
  else console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
