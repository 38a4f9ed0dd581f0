export { stackConfigFromEnv, serviceUrls, type StackConfig } from './config.js';
export { up, down, status, reset, type ServiceState } from './stack.js';
export { bootstrap, bootstrapTarget, type BootstrapTarget } from './bootstrap.js';
export { upsertConnector, deleteConnector, waitConnectorRunning, readConnectorFiles } from './connectors.js';
export { formatStates } from './print.js';
export { registerNamespacedOutboxConnector, type NamespacedConnector } from './outbox-connector.js';
export { InProcessPipeline, type HarnessOptions, type HarnessServices } from './harness.js';
export { servicesFromEnv, stackServices, ensureLocalStack } from './services-discovery.js';
