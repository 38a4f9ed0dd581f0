import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
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

function resolveInto(
  tools: Toolchain,
  pom: string,
  outDir: string,
  extra: string[],
  log: (s: string) => void,
) {
  const stamp = resolve(outDir, '.resolved');
  const digest = createHash('sha256').update(readFileSync(pom)).update(extra.join(' ')).digest('hex');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === digest) return false;
  log(`resolving ${pom} from Maven Central (first run only)…`);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const run = spawnSync(
    tools.mvn,
    [
      '-B',
      '-q',
      '-f',
      pom,
      'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies',
      `-DoutputDirectory=${outDir}`,
      '-DincludeScope=runtime',
      ...extra,
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  if (run.status !== 0) {
    throw new Error(
      `maven failed for ${pom}:\n${(run.stdout + run.stderr).split('\n').slice(-25).join('\n')}`,
    );
  }
  writeFileSync(stamp, digest);
  return true;
}

/** Resolves every jar once into the cache (outside the data folder, so `reset` keeps it). */
export function ensureJars(cfg: StackConfig, tools: Toolchain, log: (s: string) => void): JarPaths {
  const kafka = resolve(cfg.jarCache, 'kafka');
  const plugins = resolve(cfg.jarCache, 'plugins');
  const debezium = resolve(plugins, 'debezium-connector-postgres');
  const apicurioArchive = resolve(cfg.jarCache, 'apicurio-archive');
  const apicurio = resolve(cfg.jarCache, 'apicurio');

  resolveInto(tools, resolve(MAVEN_DIR, 'kafka', 'pom.xml'), kafka, [], log);
  // Connect provides Kafka's own API jars and slf4j to plugins; shipping copies breaks isolation.
  resolveInto(
    tools,
    resolve(MAVEN_DIR, 'debezium', 'pom.xml'),
    debezium,
    ['-DexcludeGroupIds=org.apache.kafka,org.slf4j'],
    log,
  );
  const fresh = resolveInto(tools, resolve(MAVEN_DIR, 'apicurio', 'pom.xml'), apicurioArchive, [], log);
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
