export { createLogger, silentLogger, type Logger, type LoggerConfig } from './logger.js';
