import { expect, test } from 'vitest';
import { EnvError, tracingEnv } from '@kairos/config';

test('span export is off by default; an OTLP endpoint turns it on; a bad URL is refused', () => {
  expect(tracingEnv('api', {})).toEqual({ tracesUrl: undefined, serviceName: 'kairos-api' });
  expect(tracingEnv('tracker', { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel:4318/' })).toEqual({
    tracesUrl: 'http://otel:4318/v1/traces',
    serviceName: 'kairos-tracker',
  });
  // Kairos's own variable wins over the standard one; the traces URL, given whole, over both.
  expect(
    tracingEnv('api', {
      KAIROS_OTEL_EXPORTER_OTLP_ENDPOINT: 'https://a:4318',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://b:4318',
    }).tracesUrl,
  ).toBe('https://a:4318/v1/traces');
  expect(
    tracingEnv('api', {
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://c:4318/custom',
      KAIROS_OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
      OTEL_SERVICE_NAME: 'scheduler',
    }),
  ).toEqual({ tracesUrl: 'http://c:4318/custom', serviceName: 'scheduler' });
  expect(() => tracingEnv('api', { KAIROS_OTEL_EXPORTER_OTLP_ENDPOINT: 'otel:4318' })).toThrow(
    new EnvError('KAIROS_OTEL_EXPORTER_OTLP_ENDPOINT=otel:4318 must be an http(s) URL'),
  );
});
