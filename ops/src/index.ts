export { stackConfigFromEnv, serviceUrls, kafkaClusterBrokers, type StackConfig } from './config.js';
export { crashKafkaClusterNode, releaseKafkaClusterNode } from './kafka-cluster.js';
export { up, upOptional, down, status, reset, crash, type ServiceState } from './stack.js';
export { prometheusConfig } from './services/prometheus-config.js';
export { bootstrap } from './bootstrap.js';
export { bootstrapTarget, type BootstrapTarget } from '@kairos/bootstrap';
export {
  upsertConnector,
  deleteConnector,
  waitConnectorRunning,
  readConnectorFiles,
} from '@kairos/bootstrap';
export { formatStates } from './print.js';
export { dropSlot, registerNamespacedOutboxConnector, type NamespacedConnector } from './outbox-connector.js';
export { InProcessPipeline, type HarnessOptions, type HarnessServices } from './harness.js';
export { servicesFromEnv, stackServices, ensureLocalStack } from './services-discovery.js';
export { ProcessDeployment, type AppName, type DeploymentOptions, type RunningApp } from './deployment.js';
export { prepareNamespace, type NamespaceSpec, type SecureKafka } from './namespace-setup.js';
export { unsecuredOAuthToken } from './services/kafka-security.js';
export { buildConsole } from './console-build.js';
export { checkPrerequisites, MissingPrerequisite, type Toolchain } from './prereqs.js';
export { writePlotPng, type PlotSpec } from './plot.js';
export { startRedisServer, type RedisServer } from './redis-server.js';
export { startRedisCluster, type RedisCluster, type RedisClusterOptions } from './redis-cluster.js';
export { DRILLS } from './drills/index.js';
export { drillInputs, type Drill, type DrillOption } from './drills/drill.js';
export { runDrill, type RunOptions } from './drills/runner.js';
export { silentProgress, terminalProgress, type Progress } from './drills/progress.js';
export { verdictLine, formatNumbers, type DrillRecord, type DrillOutcome } from './drills/record.js';
export { tallyJobs, jobChecks, lateness, stateCounts, type JobRow } from './drills/job-checks.js';
export { counterSum } from './drills/prom.js';
export { parseWorkerLine, attemptBars } from './drills/zombie-worker.js';
export { seededRandom } from './drills/random.js';
export {
  breakerSpans,
  callsPerSecond,
  jitterParts,
  parseRetryLine,
  release,
  spread,
} from './drills/storm-stats.js';
export { gaugeByLabel, longestPgOnly, modeAt, modeSpans, redisMemory } from './drills/oom-stats.js';
export {
  backlogSeries,
  dailyCronAt,
  midnightAfter,
  quantile,
  herdRelease,
  releaseCurve,
} from './drills/herd-figures.js';
export { criticalLateness, type CriticalLate, type HerdWindow, type Phase } from './drills/herd-judge.js';
