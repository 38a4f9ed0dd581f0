export {
  bootstrapTarget,
  connectorKafkaOverrides,
  ensureSchema,
  targetConnector,
  type BootstrapTarget,
} from './bootstrap.js';
export {
  deleteConnector,
  heartbeatQueryFor,
  readConnectorFiles,
  upsertConnector,
  waitConnectorRunning,
  type ConnectorFile,
} from './connectors.js';
