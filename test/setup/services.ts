import type { HarnessServices } from '@kairos/ops';

/** Where the integration suites find the real services (the KAIROS_* variables' meaning). */
export interface Services extends HarnessServices {
  readonly source: 'environment' | 'testcontainers' | 'local stack';
}

declare module 'vitest' {
  export interface ProvidedContext {
    services: Services;
  }
}
