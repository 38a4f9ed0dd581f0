import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { expect, test } from 'vitest';
import { startDeployment } from '../support/deployment.js';
import { useNamespace } from '../support/namespace.js';
import { eventually } from '../support/pipeline.js';

const ROOT = resolve(import.meta.dirname, '../..');

/** Bytes (of the files) and packages (folders with a package.json) of an installed node_modules. */
function footprint(dir: string): { bytes: number; packages: number } {
  let bytes = 0;
  let packages = 0;
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else bytes += statSync(p).size;
      if (e.isFile() && e.name === 'package.json' && /node_modules\/(@[^/]+\/)?[^/]+$/.test(d)) packages++;
    }
  };
  walk(join(dir, 'node_modules'));
  return { bytes, packages };
}

/** The fenced code blocks of a README section (its subsections included), in order. */
function readmeBlocks(file: string, heading: string): { lang: string; code: string }[] {
  const level = heading.indexOf(' ');
  const blocks: { lang: string; code: string }[] = [];
  let inSection = false;
  let fence: { lang: string; lines: string[] } | undefined;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (fence) {
      if (line !== '```') fence.lines.push(line);
      else {
        if (inSection) blocks.push({ lang: fence.lang, code: `${fence.lines.join('\n')}\n` });
        fence = undefined;
      }
      continue;
    }
    const opening = /^```(\S*)$/.exec(line);
    if (opening) fence = { lang: opening[1] ?? '', lines: [] };
    const hashes = /^(#+) /.exec(line)?.[1];
    if (hashes && inSection && hashes.length <= level) break;
    if (line === heading) inSection = true;
  }
  if (!inSection) throw new Error(`${file} has no section "${heading}"`);
  return blocks;
}

/**
 * A README's complete example: the shell lines that make the project, its tsconfig.json, the
 * program, the production variant (type-checked only: it names hosts that do not exist here) and
 * the line that builds and runs it.
 */
interface ReadmeExample {
  readonly setup: string[][];
  readonly tsconfig: string;
  readonly program: string;
  readonly production: string;
  readonly build: string[][];
  readonly start: string[];
}

function readmeExample(readme: string, heading: string): ReadmeExample {
  const blocks = readmeBlocks(join(ROOT, readme), heading);
  const of = (lang: string) => blocks.filter((b) => b.lang === lang).map((b) => b.code);
  const commands = (block: string | undefined, separator: RegExp) =>
    (block ?? '')
      .split(separator)
      .map((l) => l.replace(/\s#.*$/, '').trim())
      .filter(Boolean)
      .map((l) => l.split(/\s+/));
  const [setup, run] = of('sh');
  const [tsconfig] = of('json');
  const [program, production] = of('ts');
  const build = commands(run, /\n|&&/);
  const start = build.pop();
  if (!setup || !tsconfig || !program || !production || !start)
    throw new Error(`${readme} "${heading}": expected sh, json, ts, sh and ts blocks, got ${blocks.length}`);
  return { setup: commands(setup, /\n/), tsconfig, program, production, build, start };
}

/** Runs a command to its end (3 minutes at most); a failure throws with what it printed. */
function run(command: string, args: readonly string[], cwd: string, env = process.env): string {
  try {
    return execFileSync(command, args, { cwd, env, encoding: 'utf8', stdio: 'pipe', timeout: 180_000 });
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`${[command, ...args].join(' ')} failed in ${cwd}:\n${stdout ?? ''}${stderr ?? ''}`, {
      cause: err,
    });
  }
}

const installedVersion = (pkg: string): string =>
  (JSON.parse(readFileSync(join(ROOT, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string })
    .version;

/**
 * Makes the README's project in a new folder, line by line as a user would paste them: only the
 * SDK comes from its tarball instead of a registry, and TypeScript and @types/node at the
 * workspace's versions (from npm's cache when it has them). Type-checks the example and its
 * production variant with `strict` and `skipLibCheck: false` whatever the tsconfig says, builds it
 * with the README's line, and returns the command that starts it with its SDK's footprint.
 */
function makeProject(
  dir: string,
  example: ReadmeExample,
  sdk: { name: string; tarball: string },
): { start: string[]; footprint: { bytes: number; packages: number } } {
  mkdirSync(dir);
  const env = { ...process.env, npm_config_prefer_offline: 'true' };
  const instead: Record<string, string> = {
    [sdk.name]: sdk.tarball,
    typescript: `typescript@${installedVersion('typescript')}`,
    '@types/node': `@types/node@${installedVersion('@types/node')}`,
  };
  let size: { bytes: number; packages: number } | undefined;
  for (const [command, ...args] of example.setup) {
    expect(command, 'the README makes its project with npm alone').toBe('npm');
    run(
      'npm',
      args.map((a) => instead[a] ?? a),
      dir,
      env,
    );
    if (args.includes(sdk.name)) size = footprint(dir);
  }
  if (!size) throw new Error(`the README's setup installs no ${sdk.name}`);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Record<string, unknown>;
  expect(pkg.type).toBe('module');

  const [, entry] = example.start;
  const program = `${basename(entry ?? '', '.js')}.ts`;
  writeFileSync(join(dir, 'tsconfig.json'), example.tsconfig);
  writeFileSync(join(dir, program), example.program);
  writeFileSync(join(dir, 'production.ts'), example.production);
  run('npx', ['tsc', '--noEmit', '--strict', '--skipLibCheck', 'false'], dir);
  for (const [command, ...args] of example.build) run(command ?? '', args, dir);
  expect(readdirSync(join(dir, 'dist'))).toContain(basename(entry ?? ''));
  return { start: example.start, footprint: size };
}

function lines(child: ChildProcess, onLine: (line: string) => void): void {
  for (const stream of [child.stdout, child.stderr])
    if (stream) createInterface({ input: stream }).on('line', onLine);
}

const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(1);

// A backend team's two services, each its own folder outside the repository made as the SDK's
// README says: `npm init -y`, ESM, the SDK from its tarball, TypeScript. The README examples,
// taken verbatim, run against the stack (the local stack's connection settings come from the
// test's KAIROS_* variables): the producer's job is handled by the worker.
test("the SDK READMEs' examples, pasted into fresh npm projects outside the repository, type-check strictly and run a job", async () => {
  const ns = await useNamespace('sdk-install');
  const d = await startDeployment(ns, { apps: ['ingest', 'delay-tier', 'tracker'] });
  const dir = mkdtempSync(join(tmpdir(), 'kairos-sdk-service-'));
  ns.defer(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
  expect(dir.startsWith(ROOT)).toBe(false);

  // The pack fails on a .d.ts importing a package with incomplete types and on a README link to
  // a file the package lacks.
  const packed = run(
    process.execPath,
    [join(ROOT, 'scripts/pack-sdks.mjs'), '--out', join(dir, 'packages')],
    ROOT,
  )
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { name: string; tarball: string });
  const tarball = (name: string) => packed.find((p) => p.name === name)?.tarball ?? '';
  expect(packed.map((p) => p.name).sort()).toEqual(['@kairos/client', '@kairos/worker-sdk']);

  const workerDir = join(dir, 'worker');
  const worker = makeProject(workerDir, readmeExample('libs/worker-sdk/README.md', '## A complete worker'), {
    name: '@kairos/worker-sdk',
    tarball: tarball('@kairos/worker-sdk'),
  });
  const producerDir = join(dir, 'producer');
  const producer = makeProject(
    producerDir,
    readmeExample('libs/client/README.md', '## A complete producer'),
    {
      name: '@kairos/client',
      tarball: tarball('@kairos/client'),
    },
  );
  // The footprint each README states: the package count exactly, the size within a quarter.
  for (const [readme, name, { footprint: f }] of [
    ['libs/worker-sdk/README.md', '@kairos/worker-sdk', worker],
    ['libs/client/README.md', '@kairos/client', producer],
  ] as const) {
    console.log(`${name} installed alone: ${f.packages} packages, ${mib(f.bytes)} MiB of files`);
    const stated = /it is (\d+) packages,[^]*?and ([\d.]+) MiB of files/.exec(
      readFileSync(join(ROOT, readme), 'utf8'),
    );
    expect(stated, `${readme} states no footprint`).not.toBeNull();
    const update = `${readme} says ${stated?.[1]} packages, ${stated?.[2]} MiB; measured ${f.packages}, ${mib(f.bytes)}: update it (and the Kairos README's table)`;
    expect(f.packages, update).toBe(Number(stated?.[1]));
    expect(Math.abs(f.bytes / 2 ** 20 / Number(stated?.[2]) - 1), update).toBeLessThan(0.25);
  }

  // CommonJS services load both too (each project is ESM, a .cjs file is CommonJS).
  const cjs = (sdk: string, name: string) =>
    `const sdk = require('${sdk}'); if (typeof sdk.${name} !== 'function') process.exit(1);\n`;
  writeFileSync(join(workerDir, 'check.cjs'), cjs('@kairos/worker-sdk', 'Worker'));
  writeFileSync(join(producerDir, 'check.cjs'), cjs('@kairos/client', 'KairosClient'));
  run(process.execPath, ['check.cjs'], workerDir);
  run(process.execPath, ['check.cjs'], producerDir);

  const env = { ...process.env, ...d.env() };
  const node = (argv: string[]) => {
    const [command, ...args] = argv;
    expect(command).toBe('node');
    return args;
  };
  const output: string[] = [];
  const child = spawn(process.execPath, node(worker.start), { cwd: workerDir, env, stdio: 'pipe' });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  ns.defer(async () => {
    child.kill('SIGKILL');
    await exited;
  });
  lines(child, (l) => {
    output.push(l);
    console.log(`[worker] ${l}`);
  });
  await eventually('the README worker to start', () => output.includes('worker started'), 60_000);

  const said = run(process.execPath, node(producer.start), producerDir, env);
  const jobId = /^job (\S+) accepted$/m.exec(said)?.[1];
  expect(jobId, said).toBeDefined();
  await eventually(
    "the README worker to handle the README producer's job",
    () => output.includes(`job ${jobId}, attempt 1: mail to a@example.com`),
    60_000,
  );
  await eventually('the job to be SUCCEEDED', async () => {
    const { rows } = await d.pool.query<{ state: string }>('SELECT state FROM jobs WHERE id = $1', [jobId]);
    return rows[0]?.state === 'SUCCEEDED';
  });

  // SIGTERM, as the README says, stops the worker and the process ends by itself.
  child.kill('SIGTERM');
  const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('still running'), 30_000))]);
  expect(code).toBe(0);
}, 420_000);
