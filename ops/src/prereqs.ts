import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';

export interface Toolchain {
  readonly java: string;
  /** Apicurio Registry 3.x is built for Java 21+; may differ from `java`. */
  readonly registryJava: string;
  readonly mvn: string;
  readonly pgBin: string;
  readonly redisServer: string;
}

export class MissingPrerequisite extends Error {}

function which(cmd: string): string | undefined {
  const out = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  const path = out.stdout.trim();
  return out.status === 0 && path ? path : undefined;
}

function javaMajor(java: string): number | undefined {
  const out = spawnSync(java, ['-version'], { encoding: 'utf8' });
  const m = /version "(\d+)(?:\.(\d+))?/.exec(out.stderr + out.stdout);
  if (!m?.[1]) return undefined;
  const major = Number(m[1]);
  return major === 1 ? Number(m[2]) : major;
}

/** A Java 21+ for the registry: KAIROS_REGISTRY_JAVA_HOME, else the newest JDK in /usr/lib/jvm. */
function findRegistryJava(env: NodeJS.ProcessEnv, java: string): string | undefined {
  const candidates = [
    env.KAIROS_REGISTRY_JAVA_HOME ? resolve(env.KAIROS_REGISTRY_JAVA_HOME, 'bin', 'java') : undefined,
    java,
    ...(existsSync('/usr/lib/jvm')
      ? readdirSync('/usr/lib/jvm').map((d) => resolve('/usr/lib/jvm', d, 'bin', 'java'))
      : []),
  ].filter((p): p is string => p !== undefined && existsSync(p));
  let best: { path: string; major: number } | undefined;
  for (const path of candidates) {
    const major = javaMajor(path);
    if (major !== undefined && major >= 21 && (!best || major > best.major)) best = { path, major };
  }
  return best?.path;
}

/** PostgreSQL server binaries: Debian keeps them off PATH in /usr/lib/postgresql/<v>/bin. */
function findPgBin(): string | undefined {
  const onPath = which('postgres');
  if (onPath && which('initdb')) return resolve(onPath, '..');
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base)
    .map(Number)
    .filter((v) => v >= 15)
    .sort((a, b) => b - a);
  for (const v of versions) {
    const bin = resolve(base, String(v), 'bin');
    if (existsSync(resolve(bin, 'postgres')) && existsSync(resolve(bin, 'initdb'))) return bin;
  }
  return undefined;
}

/** Finds every tool the stack needs or throws one line naming what is missing and how to get it. */
export function checkPrerequisites(env: NodeJS.ProcessEnv = process.env): Toolchain {
  const javaHome = env.JAVA_HOME;
  const java = javaHome ? resolve(javaHome, 'bin', 'java') : which('java');
  if (!java || !existsSync(java)) {
    throw new MissingPrerequisite('missing: java 17+ (install: apt-get install openjdk-17-jre-headless)');
  }
  const major = javaMajor(java);
  if (major === undefined || major < 17) {
    throw new MissingPrerequisite(
      `missing: java 17+ (found ${major ?? 'unknown'} at ${java}; set JAVA_HOME)`,
    );
  }
  const mvn = which('mvn');
  if (!mvn) throw new MissingPrerequisite('missing: mvn (install: apt-get install maven)');
  const pgBin = findPgBin();
  if (!pgBin) {
    throw new MissingPrerequisite(
      'missing: PostgreSQL 15+ server binaries (install: apt-get install postgresql)',
    );
  }
  const redisServer = which('redis-server');
  if (!redisServer)
    throw new MissingPrerequisite('missing: redis-server 7 (install: apt-get install redis-server)');
  const registryJava = findRegistryJava(env, java);
  if (!registryJava) {
    throw new MissingPrerequisite(
      'missing: java 21+ for Apicurio Registry 3.3 (install a JDK 21+ under /usr/lib/jvm or set KAIROS_REGISTRY_JAVA_HOME)',
    );
  }
  return { java, registryJava, mvn, pgBin, redisServer };
}
