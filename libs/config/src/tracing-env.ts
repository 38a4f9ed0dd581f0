import { EnvError } from './env-vars.js';

/** OpenTelemetry span export (off by default). */
export interface TracingEnv {
  /**
   * Where spans go (OTLP/HTTP), or undefined: export off. From OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
   * (the full URL), else KAIROS_OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT (a
   * base URL, `/v1/traces` appended). Default: none.
   */
  readonly tracesUrl: string | undefined;
  /** OTEL_SERVICE_NAME, default `kairos-<component>`. */
  readonly serviceName: string;
}

function httpUrl(name: string, raw: string): string {
  if (!/^https?:\/\/[^\s]+$/.test(raw)) throw new EnvError(`${name}=${raw} must be an http(s) URL`);
  return raw;
}

export function tracingEnv(component: string, env: NodeJS.ProcessEnv = process.env): TracingEnv {
  const serviceName = env.OTEL_SERVICE_NAME || `kairos-${component}`;
  const full = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (full) return { tracesUrl: httpUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', full), serviceName };
  const baseName = env.KAIROS_OTEL_EXPORTER_OTLP_ENDPOINT
    ? 'KAIROS_OTEL_EXPORTER_OTLP_ENDPOINT'
    : 'OTEL_EXPORTER_OTLP_ENDPOINT';
  const base = env[baseName];
  if (!base) return { tracesUrl: undefined, serviceName };
  return { tracesUrl: `${httpUrl(baseName, base).replace(/\/+$/, '')}/v1/traces`, serviceName };
}
