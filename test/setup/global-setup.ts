import { resolve } from 'node:path';
import type { TestProject } from 'vitest/node';
import {
  bootstrapTarget,
  buildConsole,
  ensureLocalStack,
  servicesFromEnv,
  stackConfigFromEnv,
  stackServices,
} from '@kairos/ops';
import type { Services } from './services.js';

const root = resolve(import.meta.dirname, '..', '..');
const log = (line: string) => console.log(`[stack] ${line}`);

/** 1. URLs given in the environment: use them as they are. */
function fromEnvironment(): Services | undefined {
  const services = servicesFromEnv(process.env);
  return services && { ...services, source: 'environment' };
}

/** 2. A Docker engine answers: the same topology from docker-compose.yml via testcontainers. */
async function fromTestcontainers(): Promise<{ services: Services; stop: () => Promise<void> } | undefined> {
  if (process.env.KAIROS_TESTCONTAINERS === '0') return undefined;
  const tc = await import('testcontainers');
  try {
    await Promise.race([
      tc.getContainerRuntimeClient(),
      new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 5000)),
    ]);
  } catch {
    return undefined;
  }
  log('Docker engine found: starting docker-compose.yml services with testcontainers');
  const env = await new tc.DockerComposeEnvironment(root, 'docker-compose.yml')
    .withWaitStrategy('connect', tc.Wait.forHttp('/connector-plugins', 8083))
    .withWaitStrategy('registry', tc.Wait.forHttp('/apis/ccompat/v7/subjects', 8080))
    .up(['postgres', 'redis', 'kafka', 'connect', 'registry']);
  // Compose publishes the same host ports as the local stack.
  // docker-compose.yml's Kafka has no SASL_SSL listener and its PostgreSQL no TLS: those tests skip.
  const { secureKafka: _none, pgTlsUrl: _plain, ...plain } = stackServices(stackConfigFromEnv(root));
  const services: Services = { ...plain, source: 'testcontainers' };
  await bootstrapTarget(
    {
      kafkaBrokers: services.kafkaBrokers,
      connectUrl: services.connectUrl,
      pgUrl: services.pgUrl,
      connectorsDir: resolve(root, 'connectors'),
      jobEventPartitions: services.jobEventPartitions,
    },
    log,
  );
  return { services, stop: async () => void (await env.down()) };
}

/** 3. Otherwise the project's own local stack (ops/), started if it is not running. */
async function fromLocalStack(): Promise<Services> {
  return { ...(await ensureLocalStack(stackConfigFromEnv(root), log)), source: 'local stack' };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const env = fromEnvironment();
  const tc = env ? undefined : await fromTestcontainers();
  const services = env ?? tc?.services ?? (await fromLocalStack());
  log(`services from the ${services.source}`);
  project.provide('services', services);
  // One build of the console for the browser tests, in a folder of the test run's own.
  project.provide('consoleDir', await buildConsole(root, resolve(root, '.build', `console-${project.name}`)));
  return async () => {
    await tc?.stop();
  };
}
