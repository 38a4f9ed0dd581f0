// Packs the SDKs a service installs with `npm install`: @kairos/worker-sdk and @kairos/client.
// Each is one bundle (ESM and CJS, with bundled .d.ts): our internal packages and the few small
// libraries they use are inside it, and only kafkajs, avsc (and ioredis, prom-client and
// @opentelemetry/api for the worker) remain dependencies. The schema registry client is bundled from its own module, not the package's
// index, so none of the cloud KMS SDKs that come with @confluentinc/schemaregistry is installed.
//
// Usage: node scripts/pack-sdks.mjs [--out <dir>]   (default .build/packages)
// Prints one JSON line per tarball: { name, tarball, bytes, bundledPackages }.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'tsdown';

const root = resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({ options: { out: { type: 'string' } } });
const out = resolve(args.out ?? join(root, '.build/packages'));

/** What each SDK leaves to npm: the big, well-known runtime libraries, at the workspace's ranges. */
const SDKS = [
  {
    dir: 'libs/worker-sdk',
    // @opentelemetry/api stays a dependency: one copy per service, whose SDK registration it sees.
    runtime: ['kafkajs', 'ioredis', 'avsc', 'prom-client', '@opentelemetry/api'],
    assets: { 'libs/redis/src/scripts': 'dist/scripts' },
  },
  { dir: 'libs/client', runtime: ['kafkajs', 'avsc'], assets: {} },
];

const readJson = (path) => JSON.parse(readFileSync(path, 'utf8'));
const rootPkg = readJson(join(root, 'package.json'));

/** The version range of a runtime dependency, as the workspace packages declare it. */
function rangeOf(dep) {
  for (const dir of ['libs/kafka', 'libs/worker-sdk', 'libs/client', 'libs/redis']) {
    const range = readJson(join(root, dir, 'package.json')).dependencies?.[dep];
    if (range) return range;
  }
  throw new Error(`no workspace package declares ${dep}`);
}

/** The package a bundled file came from (node_modules/<name>/…), or undefined for our own code. */
function packageOf(source) {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(source);
  return m?.[1];
}

/** Licence texts of every third-party package inside the bundle, from its source map. */
function thirdPartyNotices(mapFile) {
  const sources = readJson(mapFile).sources.map((s) => resolve(dirname(mapFile), s));
  const names = new Map();
  for (const s of sources) {
    const name = packageOf(s);
    if (name)
      names.set(name, s.slice(0, s.lastIndexOf(`node_modules/${name}/`) + `node_modules/${name}`.length));
  }
  const sections = [...names.entries()].sort().map(([name, dir]) => {
    const pkg = readJson(join(dir, 'package.json'));
    const file = readdirSync(dir).find((f) => /^(licen[cs]e|copying)/i.test(f));
    const text = file
      ? readFileSync(join(dir, file), 'utf8').trim()
      : `License: ${pkg.license ?? 'see package'}`;
    return `## ${name} ${pkg.version} (${pkg.license ?? 'unknown'})\n\n\`\`\`\n${text}\n\`\`\``;
  });
  return {
    count: names.size,
    text: `# Third-party notices\n\nThis package bundles the following packages.\n\n${sections.join('\n\n')}\n`,
  };
}

async function bundle(sdk, stage) {
  const runtime = new RegExp(`^(${sdk.runtime.join('|')})(/|$)`);
  const bare = (id) => !id.startsWith('.') && !id.startsWith('/') && !id.startsWith('\0');
  await build({
    cwd: join(root, sdk.dir),
    entry: { index: 'src/index.ts' },
    outDir: join(stage, 'dist'),
    format: ['esm', 'cjs'],
    platform: 'node',
    target: 'node20',
    shims: true,
    sourcemap: true,
    dts: { build: true, tsconfig: join(root, sdk.dir, 'tsconfig.json') },
    tsconfig: join(root, sdk.dir, 'tsconfig.json'),
    // Types of third-party packages stay imports (their .d.ts are not ours to inline); code is bundled.
    deps: {
      neverBundle: (id, importer) =>
        runtime.test(id) || (bare(id) && !id.startsWith('@kairos/') && /\.d\.[cm]?ts$/.test(importer ?? '')),
      alwaysBundle: (id) => !runtime.test(id),
    },
    inputOptions: { resolve: { conditionNames: ['kairos-source', 'node', 'import', 'default'] } },
    clean: true,
    logLevel: 'warn',
  });
}

function manifest(sdk, source) {
  return {
    name: source.name,
    version: source.version,
    description: source.description,
    license: 'Apache-2.0',
    type: 'module',
    main: './dist/index.cjs',
    types: './dist/index.d.mts',
    exports: {
      '.': {
        import: { types: './dist/index.d.mts', default: './dist/index.mjs' },
        require: { types: './dist/index.d.cts', default: './dist/index.cjs' },
      },
    },
    files: [
      'dist/**/*.mjs',
      'dist/**/*.cjs',
      'dist/**/*.d.mts',
      'dist/**/*.d.cts',
      'dist/scripts',
      '*.avsc',
      'THIRD-PARTY-NOTICES.md',
    ],
    engines: { node: '>=20.19' },
    dependencies: Object.fromEntries(sdk.runtime.map((d) => [d, rangeOf(d)])),
  };
}

mkdirSync(out, { recursive: true });
for (const sdk of SDKS) {
  const source = readJson(join(root, sdk.dir, 'package.json'));
  const stage = join(root, '.build/stage', sdk.dir.split('/').pop());
  rmSync(stage, { recursive: true, force: true });
  await bundle(sdk, stage);
  // Files the bundle reads at run time, next to it: Lua scripts and the Avro schemas.
  for (const [from, to] of Object.entries(sdk.assets))
    cpSync(join(root, from), join(stage, to), { recursive: true });
  // The schemas package reads its .avsc files from the folder above its code: the package root here.
  for (const f of readdirSync(join(root, 'schemas')).filter((f) => f.endsWith('.avsc')))
    cpSync(join(root, 'schemas', f), join(stage, f));
  const notices = thirdPartyNotices(join(stage, 'dist/index.mjs.map'));
  writeFileSync(join(stage, 'THIRD-PARTY-NOTICES.md'), notices.text);
  for (const f of readdirSync(join(stage, 'dist')).filter((f) => f.endsWith('.map')))
    rmSync(join(stage, 'dist', f));
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(manifest(sdk, source), null, 2)}\n`);
  cpSync(join(root, sdk.dir, 'README.md'), join(stage, 'README.md'));
  cpSync(join(root, 'LICENSE'), join(stage, 'LICENSE'));
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--pack-destination', out], { cwd: stage, encoding: 'utf8' }),
  )[0];
  const tarball = join(out, packed.filename);
  if (!existsSync(tarball)) throw new Error(`npm pack wrote no ${tarball}`);
  console.log(
    JSON.stringify({
      name: source.name,
      tarball,
      bytes: packed.size,
      unpackedBytes: packed.unpackedSize,
      bundledPackages: notices.count,
      rootVersion: rootPkg.version,
    }),
  );
}
