import type { HarnessServices } from '@kairos/ops';

/** Where the integration suites find the real services (the KAIROS_* variables' meaning). */
export interface Services extends HarnessServices {
  readonly source: 'environment' | 'testcontainers' | 'local stack';
}

declare module 'vitest' {
  export interface ProvidedContext {
    services: Services;
    /** The console the tests' APIs serve, built once for the run (global setup). */
    consoleDir: string;
  }
}
