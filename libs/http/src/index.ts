export {
  clientErrorProblem,
  frameworkErrorProblem,
  problem,
  sendProblem,
  toProblem,
  type Problem,
} from './problem.js';
export { KeyVerifier, type KeyVerifierOptions } from './key-verifier.js';
export { installAuth, callerOf, DEFAULT_RATE_PER_SEC, type AuthOptions } from './auth.js';
export { probe, readinessHandler, runningCheck, type CheckResult, type ReadinessCheck } from './readiness.js';
export {
  installRequestMetrics,
  serveMetrics,
  type MetricsSource,
  type RequestObserver,
} from './request-metrics.js';
export { postgresCheck, startOpsServer, type OpsServerOptions } from './ops-server.js';
