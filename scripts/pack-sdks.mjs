// Packs the SDKs a service installs with `npm install`: @kairos/worker-sdk and @kairos/client.
// Each is one bundle (ESM and CJS, with bundled .d.ts): our internal packages and the few small
// libraries they use are inside it, and only kafkajs, avsc (and ioredis, prom-client and
// @opentelemetry/api for the worker) remain dependencies. The schema registry client is bundled from its own module, not the package's
// index, so none of the cloud KMS SDKs that come with @confluentinc/schemaregistry is installed.
// The .d.ts import no package but those a service's `tsc` can check with skipLibCheck off (see
// `types` below), and the README links to nothing outside the package.
//
// Usage: node scripts/pack-sdks.mjs [--out <dir>]   (default .build/packages)
// Prints one JSON line per tarball: { name, tarball, bytes, bundledPackages }.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { build } from 'tsdown';
import ts from 'typescript';

const root = resolve(import.meta.dirname, '..');
const { values: args } = parseArgs({ options: { out: { type: 'string' } } });
const out = resolve(args.out ?? join(root, '.build/packages'));

/**
 * What each SDK leaves to npm: the big, well-known runtime libraries, at the workspace's ranges.
 * `types`: the packages its public declarations may import. Only ones whose own declarations are
 * complete without packages lacking types: ioredis's import `redis-errors` (no types), so a service
 * compiling with skipLibCheck off fails on them (TS7016) if our .d.ts imports ioredis.
 */
const SDKS = [
  {
    dir: 'libs/worker-sdk',
    // @opentelemetry/api stays a dependency: one copy per service, whose SDK registration it sees.
    runtime: ['kafkajs', 'ioredis', 'avsc', 'prom-client', '@opentelemetry/api'],
    types: ['prom-client'], // WorkerOptions.metrics is a prom-client Registry
    assets: { 'libs/redis/src/scripts': 'dist/scripts' },
  },
  { dir: 'libs/client', runtime: ['kafkajs', 'avsc'], types: [], assets: {} },
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

/**
 * Drops the imports a bundled declaration file does not use, and returns the modules it still
 * imports. The bundler keeps an external package's import after tree-shaking every declaration
 * that used it (`import { Cluster, Redis } from "ioredis"` with neither name left), and a
 * service's `tsc` then loads that package's types all the same.
 */
function pruneUnusedImports(file) {
  const text = readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const used = new Set();
  const modules = new Set();
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) return;
    if (ts.isIdentifier(node)) used.add(node.text);
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument))
      modules.add(node.argument.literal.text);
    if (ts.isExportDeclaration(node) && node.moduleSpecifier) modules.add(node.moduleSpecifier.text);
    ts.forEachChild(node, visit);
  };
  ts.forEachChild(sf, visit);
  const edits = [];
  for (const node of sf.statements.filter(ts.isImportDeclaration)) {
    const clause = node.importClause;
    const from = node.moduleSpecifier.getText(sf);
    const parts = [];
    if (clause?.name && used.has(clause.name.text)) parts.push(clause.name.text);
    const bindings = clause?.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings) && used.has(bindings.name.text))
      parts.push(bindings.getText(sf));
    if (bindings && ts.isNamedImports(bindings)) {
      const kept = bindings.elements.filter((e) => used.has(e.name.text)).map((e) => e.getText(sf));
      if (kept.length > 0) parts.push(`{ ${kept.join(', ')} }`);
    }
    const replacement =
      parts.length === 0 ? '' : `import ${clause.isTypeOnly ? 'type ' : ''}${parts.join(', ')} from ${from};`;
    if (parts.length > 0) modules.add(node.moduleSpecifier.text);
    edits.push({ start: node.getStart(sf), end: node.end, replacement });
  }
  let pruned = text;
  for (const e of edits.reverse()) pruned = pruned.slice(0, e.start) + e.replacement + pruned.slice(e.end);
  writeFileSync(file, pruned.replace(/^\n+/, ''));
  return modules;
}

/** Prunes every declaration file of a staged SDK; fails if one imports a package not in `types`. */
function checkDeclarations(sdk, stage) {
  const builtin = new Set(builtinModules);
  for (const f of readdirSync(join(stage, 'dist')).filter((f) => /\.d\.[cm]ts$/.test(f))) {
    for (const m of pruneUnusedImports(join(stage, 'dist', f))) {
      const pkg = m.startsWith('@') ? m.split('/').slice(0, 2).join('/') : m.split('/')[0];
      if (m.startsWith('node:') || builtin.has(m) || sdk.types.includes(pkg)) continue;
      throw new Error(
        `${sdk.dir}: dist/${f} imports ${m}; a service's tsc would check its types too. ` +
          'Keep its types out of the public API, or add it to `types` if its declarations are complete',
      );
    }
  }
}

/**
 * Fails on a link of the README that leads nowhere once packed: one to a file outside the package
 * (`../../README.md` of the repository) or not in it. A link is an absolute URL, an anchor, or a
 * file the tarball holds.
 */
function checkReadmeLinks(sdk, stage, packedFiles) {
  const readme = readFileSync(join(stage, 'README.md'), 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .replace(/`[^`\n]*`/g, '');
  for (const [, target] of readme.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^(https?:|mailto:|#)/.test(target)) continue;
    const path = target.split('#')[0].replace(/^\.\//, '');
    if (!packedFiles.has(path))
      throw new Error(`${sdk.dir}/README.md links to ${target}, which is not in the package`);
  }
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
  checkDeclarations(sdk, stage);
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
  try {
    checkReadmeLinks(sdk, stage, new Set(packed.files.map((f) => f.path)));
  } catch (err) {
    rmSync(tarball);
    throw err;
  }
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
