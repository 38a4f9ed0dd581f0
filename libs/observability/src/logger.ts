import { pino, type Logger, type LoggerOptions } from 'pino';

export interface LoggerConfig {
  /** Component name, on every line as `component`. Required. */
  readonly component: string;
  /** pino level. Default: info. */
  readonly level?: string;
  /** Extra base fields (instance id, partition…). */
  readonly base?: Record<string, unknown>;
}

/** JSON lines to stdout; `npm start` and pino-pretty make them readable. */
export function createLogger(config: LoggerConfig): Logger {
  const options: LoggerOptions = {
    level: config.level ?? 'info',
    base: { component: config.component, ...config.base },
    timestamp: pino.stdTimeFunctions.isoTime,
  };
  return pino(options);
}

/** A logger that drops everything (library default when the host passes none). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

export type { Logger };
