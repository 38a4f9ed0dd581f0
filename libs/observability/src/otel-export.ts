import { trace } from '@opentelemetry/api';
import type { Logger } from 'pino';

export interface OtelExportConfig {
  /** OTLP/HTTP traces URL (`…/v1/traces`); undefined: export off (the API stays a no-op). */
  readonly tracesUrl: string | undefined;
  /** `service.name` of the spans (e.g. `kairos-delay-tier`). */
  readonly serviceName: string;
}

export interface OtelExport {
  /** Flushes the spans not sent yet and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Registers the OpenTelemetry SDK as the global tracer provider, exporting spans in batches over
 * OTLP/HTTP, when a traces URL is configured; otherwise does nothing (undefined). The SDK's
 * modules are loaded only then, so a deployment without tracing never loads them.
 */
export async function startOtelExport(
  config: OtelExportConfig,
  log: Logger,
): Promise<OtelExport | undefined> {
  const url = config.tracesUrl;
  if (url === undefined) return undefined;
  const [{ TracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] =
    await Promise.all([
      import('@opentelemetry/sdk-trace'),
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/resources'),
    ]);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName }),
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }) })],
  });
  if (!trace.setGlobalTracerProvider(provider)) {
    log.warn('an OpenTelemetry tracer provider was registered already; Kairos spans go to it');
  }
  log.info({ tracesUrl: url, serviceName: config.serviceName }, 'OpenTelemetry span export on');
  return {
    shutdown: async () => {
      await provider.shutdown().catch((err: unknown) => log.warn({ err }, 'span export shutdown failed'));
      trace.disable();
    },
  };
}
