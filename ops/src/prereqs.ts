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
  /** Only for the optional Redis Cluster (`up --with redis-cluster`): it creates the cluster. */
  readonly redisCli: string;
  /** Only for the optional Prometheus (`up --with prometheus`). */
  readonly prometheus: string;
  /** Only for the console's browser tests. */
  readonly chromium?: string;
}

export class MissingPrerequisite extends Error {}

/** The command's path on PATH (the given environment's), or undefined. */
function which(cmd: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const out = spawnSync('/bin/sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8', env });
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

/** One tool the stack may need: how to find it, and the Debian package that provides it. */
interface Requirement {
  readonly key: keyof Toolchain | 'openssl' | 'promtool' | 'chromium';
  /** What the missing-line says, e.g. `java 17+`. */
  readonly what: string;
  /** Debian package to install, or undefined when Debian has none (then `hint` says how). */
  readonly debian: string | undefined;
  readonly hint?: string;
  find(env: NodeJS.ProcessEnv, found: Partial<Toolchain>): string | undefined;
}

const REQUIREMENTS: readonly Requirement[] = [
  {
    key: 'java',
    what: 'java 17+',
    debian: 'openjdk-17-jre-headless',
    find: (env) => {
      const java = env.JAVA_HOME ? resolve(env.JAVA_HOME, 'bin', 'java') : which('java', env);
      return java && existsSync(java) && (javaMajor(java) ?? 0) >= 17 ? java : undefined;
    },
  },
  {
    key: 'mvn',
    what: 'mvn (fetches the Kafka, Debezium and Apicurio jars)',
    debian: 'maven',
    find: (env) => which('mvn', env),
  },
  { key: 'pgBin', what: 'PostgreSQL 15+ server binaries', debian: 'postgresql', find: () => findPgBin() },
  {
    key: 'redisServer',
    what: 'redis-server 7',
    debian: 'redis-server',
    find: (env) => which('redis-server', env),
  },
  {
    key: 'redisCli',
    what: 'redis-cli 7 (creates the optional Redis Cluster of `up --with redis-cluster`)',
    debian: 'redis-tools',
    find: (env) => which('redis-cli', env),
  },
  {
    key: 'openssl',
    what: "openssl (certificates of Kafka's SASL_SSL listener and PostgreSQL's TLS)",
    debian: 'openssl',
    find: (env) => which('openssl', env),
  },
  {
    key: 'promtool',
    what: 'promtool (checks and unit-tests the alert rules in ops/prometheus)',
    debian: 'prometheus',
    find: (env) => which('promtool', env),
  },
  {
    key: 'prometheus',
    what: 'prometheus (the optional metrics service of `up --with prometheus`)',
    debian: 'prometheus',
    find: (env) => which('prometheus', env),
  },
  {
    key: 'chromium',
    what: "chromium (the console's browser tests drive it headless)",
    debian: 'chromium',
    find: (env) => env.KAIROS_CHROMIUM ?? which('chromium', env),
  },
  {
    key: 'registryJava',
    what: 'java 21+ for Apicurio Registry 3.3',
    debian: undefined,
    hint: 'install a JDK 21+ under /usr/lib/jvm (e.g. Temurin) or set KAIROS_REGISTRY_JAVA_HOME',
    find: (env, found) => findRegistryJava(env, found.java ?? which('java', env) ?? 'java'),
  },
];

/** Which tools each service needs to be started here (a service that already answers needs none), and the alert rules' test. */
const NEEDS: Readonly<Record<string, readonly Requirement['key'][]>> = {
  postgres: ['pgBin', 'openssl'],
  redis: ['redisServer'],
  kafka: ['java', 'mvn', 'openssl'],
  connect: ['java', 'mvn'],
  registry: ['mvn', 'registryJava'],
  prometheus: ['prometheus'],
  'redis-cluster': ['redisServer', 'redisCli'],
  'kafka-cluster': ['java', 'mvn'],
  // Not a service: what the alert rules' test needs (ops/test/prometheus-rules.test.ts).
  'alert-rules': ['promtool'],
  // Nor this: what the console's browser tests need (test/support/browser.ts).
  'console-browser': ['chromium'],
};

function missingOf(
  keys: ReadonlySet<string>,
  env: NodeJS.ProcessEnv,
): { found: Partial<Toolchain>; missing: Requirement[] } {
  const found: Record<string, string> = {};
  const missing: Requirement[] = [];
  for (const r of REQUIREMENTS.filter((r) => keys.has(r.key))) {
    const path = r.find(env, found);
    if (path) found[r.key] = path;
    else missing.push(r);
  }
  return { found, missing };
}

/** Root with apt-get: the Debian packages are installed here rather than listed. */
function canInstall(env: NodeJS.ProcessEnv): boolean {
  return process.getuid?.() === 0 && which('apt-get', env) !== undefined && env.KAIROS_NO_INSTALL !== '1';
}

function aptInstall(packages: readonly string[], log: (line: string) => void): void {
  log(
    `installing the missing Debian packages: ${packages.join(' ')} (apt-get; KAIROS_NO_INSTALL=1 to only list them)`,
  );
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', '--no-install-recommends', ...packages],
  ]) {
    const run = spawnSync('apt-get', args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    if (run.status !== 0)
      throw new MissingPrerequisite(`apt-get ${args[0]} failed: ${(run.stderr || run.stdout).trim()}`);
  }
}

/**
 * Finds the tools needed to start `services` (all of them by default). Everything missing is
 * reported at once; run as root with apt-get, the Debian packages among it are installed first
 * (saying so), and only what is still missing then is an error.
 */
export function checkPrerequisites(
  services: readonly string[] = Object.keys(NEEDS).filter(
    (k) => !['alert-rules', 'console-browser', 'prometheus', 'redis-cluster', 'kafka-cluster'].includes(k),
  ),
  log: (line: string) => void = console.log,
  env: NodeJS.ProcessEnv = process.env,
): Toolchain {
  const keys = new Set(services.flatMap((s) => NEEDS[s] ?? []));
  let { found, missing } = missingOf(keys, env);
  const installable = [...new Set(missing.flatMap((r) => (r.debian ? [r.debian] : [])))];
  if (installable.length > 0 && canInstall(env)) {
    aptInstall(installable, log);
    ({ found, missing } = missingOf(keys, env));
  }
  if (missing.length > 0) {
    const lines = missing.map(
      (r) => `  - ${r.what}: ${r.debian ? `apt-get install ${r.debian}` : (r.hint ?? 'install it')}`,
    );
    throw new MissingPrerequisite(`missing prerequisites (${missing.length}):\n${lines.join('\n')}`);
  }
  // Tools of services that need not start stay empty: nothing will use them.
  return {
    java: '',
    registryJava: '',
    mvn: '',
    pgBin: '',
    redisServer: '',
    redisCli: '',
    prometheus: '',
    ...found,
  };
}
