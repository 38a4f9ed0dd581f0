import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { StackConfig } from './config.js';
import type { Toolchain } from './prereqs.js';

export interface JarPaths {
  /** Kafka broker + Connect runtime classpath directory. */
  readonly kafka: string;
  /** Kafka Connect plugin.path (holds the Debezium PostgreSQL connector). */
  readonly plugins: string;
  /** Unpacked Apicurio Registry (quarkus-run.jar inside). */
  readonly apicurio: string;
}

const MAVEN_DIR = resolve(import.meta.dirname, '..', 'maven');

/** Sizes in Maven's transfer lines: `Downloaded from central: <url> (1.2 MB at 3.4 MB/s)`. */
const DOWNLOADED = /^\[INFO\] Downloaded from [^:]+: \S+ \(([\d.]+) (B|kB|KB|MB|GB)/;
const UNIT: Record<string, number> = { B: 1, kB: 1e3, KB: 1e3, MB: 1e6, GB: 1e9 };

/** Runs Maven, reporting the bytes it downloads every few seconds (a first run fetches ~390 MB). */
function mavenWithProgress(args: readonly string[], mvn: string, log: (s: string) => void): Promise<string> {
  const child = spawn(mvn, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const tail: string[] = [];
  let files = 0;
  let bytes = 0;
  const report = setInterval(() => {
    if (files > 0) log(`  … ${files} files, ${(bytes / 1e6).toFixed(0)} MB downloaded so far`);
  }, 5000);
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      const m = DOWNLOADED.exec(line);
      if (m) {
        files++;
        bytes += Number(m[1]) * (UNIT[m[2] ?? 'B'] ?? 1);
      } else if (!line.startsWith('[INFO] Download')) {
        tail.push(line);
        if (tail.length > 25) tail.shift();
      }
    });
  }
  return new Promise((resolveRun, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      clearInterval(report);
      if (files > 0) log(`  ${files} files, ${(bytes / 1e6).toFixed(0)} MB downloaded`);
      if (code === 0) resolveRun(tail.join('\n'));
      else reject(new Error(`maven exited with ${code}:\n${tail.join('\n')}`));
    });
  });
}

async function resolveInto(
  tools: Toolchain,
  pom: string,
  outDir: string,
  extra: string[],
  log: (s: string) => void,
): Promise<boolean> {
  const stamp = resolve(outDir, '.resolved');
  const digest = createHash('sha256').update(readFileSync(pom)).update(extra.join(' ')).digest('hex');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) return false;
  log(`resolving ${pom} from Maven Central (first run only)…`);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  try {
    await mavenWithProgress(
      [
        '-B',
        '-f',
        pom,
        'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies',
        `-DoutputDirectory=${outDir}`,
        '-DincludeScope=runtime',
        ...extra,
      ],
      tools.mvn,
      log,
    );
  } catch (err) {
    throw new Error(`maven failed for ${pom}: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
  writeFileSync(stamp, digest);
  return true;
}

/** Where the jars are (or will be) in the cache. */
export function jarPaths(cfg: StackConfig): JarPaths {
  return {
    kafka: resolve(cfg.jarCache, 'kafka'),
    plugins: resolve(cfg.jarCache, 'plugins'),
    apicurio: resolve(cfg.jarCache, 'apicurio'),
  };
}

/** Resolves every jar once into the cache (outside the data folder, so `reset` keeps it). */
export async function ensureJars(
  cfg: StackConfig,
  tools: Toolchain,
  log: (s: string) => void,
): Promise<JarPaths> {
  const { kafka, plugins, apicurio } = jarPaths(cfg);
  const debezium = resolve(plugins, 'debezium-connector-postgres');
  const apicurioArchive = resolve(cfg.jarCache, 'apicurio-archive');

  await resolveInto(tools, resolve(MAVEN_DIR, 'kafka', 'pom.xml'), kafka, [], log);
  // Connect provides Kafka's own API jars and slf4j to plugins; shipping copies breaks isolation.
  await resolveInto(
    tools,
    resolve(MAVEN_DIR, 'debezium', 'pom.xml'),
    debezium,
    ['-DexcludeGroupIds=org.apache.kafka,org.slf4j'],
    log,
  );
  const fresh = await resolveInto(tools, resolve(MAVEN_DIR, 'apicurio', 'pom.xml'), apicurioArchive, [], log);
  if (fresh || !existsSync(resolve(apicurio, 'quarkus-run.jar'))) {
    const archive = readdirSync(apicurioArchive).find((f) => f.endsWith('.tar.gz'));
    if (!archive) throw new Error(`no Apicurio archive in ${apicurioArchive}`);
    rmSync(apicurio, { recursive: true, force: true });
    mkdirSync(apicurio, { recursive: true });
    const tar = spawnSync('tar', ['-xzf', resolve(apicurioArchive, archive), '-C', apicurio], {
      encoding: 'utf8',
    });
    if (tar.status !== 0) throw new Error(`could not unpack ${archive}: ${tar.stderr}`);
    if (!existsSync(resolve(apicurio, 'quarkus-run.jar'))) {
      throw new Error(`${archive} has no quarkus-run.jar at its top level`);
    }
  }
  return { kafka, plugins, apicurio };
}
