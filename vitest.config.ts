import { readdirSync, existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources, so tests never need a build first.
const root = import.meta.dirname;
const alias = Object.fromEntries(
  [
    ...readdirSync(resolve(root, 'libs')).map((d) => [
      `@kairos/${d}`,
      resolve(root, 'libs', d, 'src/index.ts'),
    ]),
    ...(existsSync(resolve(root, 'apps')) ? readdirSync(resolve(root, 'apps')) : []).map((d) => [
      `@kairos/${d}`,
      resolve(root, 'apps', d, 'src/index.ts'),
    ]),
    ['@kairos/ops', resolve(root, 'ops/src/index.ts')],
    ['@kairos/schemas', resolve(root, 'schemas/src/index.ts')],
  ].filter(([, path]) => existsSync(path)),
) as Record<string, string>;

/** Integration tests whose assertions are timings (rates, fairness, a cancel within a heartbeat). */
const TIMED = [
  'test/integration/fair-release.test.ts',
  'test/integration/leases.test.ts',
  'test/integration/schedules-misfire.test.ts',
];

export default defineConfig({
  resolve: { alias },
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [
            'libs/*/test/**/*.test.ts',
            'apps/*/test/**/*.test.ts',
            'ops/test/**/*.test.ts',
            'bench/test/**/*.test.ts',
            'test/chaos/*.unit.test.ts',
          ],
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/**/*.test.ts'],
          exclude: [...TIMED, 'test/chaos/**', 'test/cluster/**'],
          globalSetup: ['test/setup/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          // Two cores: the JVMs need one; more test workers only add contention.
          maxWorkers: 2,
        },
      },
      {
        extends: true,
        test: {
          name: 'integration-timed',
          include: TIMED,
          globalSetup: ['test/setup/global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 300_000,
          // After the other suites, one file at a time: their assertions bound rates and delays
          // to a few milliseconds, which a parallel suite's load on two cores would decide.
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: 'cluster',
          include: ['test/cluster/*.test.ts'],
          globalSetup: ['test/setup/global-setup.ts'],
          testTimeout: 420_000,
          hookTimeout: 300_000,
          // Alone, after the suites that share the stack: three more JVMs (the three-broker
          // Kafka of `up --with kafka-cluster`), one killed; or eleven app processes (scale-out).
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: {
          name: 'chaos',
          include: ['test/chaos/chaos.test.ts'],
          globalSetup: ['test/setup/global-setup.ts'],
          testTimeout: 600_000,
          hookTimeout: 300_000,
          // Last and alone: it kills processes (and the local stack's Kafka, Connect and PostgreSQL)
          // and its timings (failover, canary recovery) need the machine to itself.
          maxWorkers: 1,
          sequence: { groupOrder: 3 },
        },
      },
      // The soak (randomized faults for KAIROS_SOAK_MINUTES) only when asked: `npm run test:soak`.
      ...(process.env.KAIROS_SOAK_MINUTES
        ? [
            {
              extends: true,
              test: {
                name: 'soak',
                include: ['test/chaos/soak.test.ts'],
                globalSetup: ['test/setup/global-setup.ts'],
                hookTimeout: 300_000,
                maxWorkers: 1,
                sequence: { groupOrder: 4 },
              },
            },
          ]
        : []),
    ],
  },
});
