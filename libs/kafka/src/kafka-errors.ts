import { KafkaUnsentMessagesError } from './complete-sends.js';
import { RestError } from './registry.js';
import { classified, type ClassifiedError } from '@kairos/core';

/** Network failures and 5xx answers are worth retrying; a 4xx (e.g. unknown schema id) is not. */
export function isTransientRegistryError(err: unknown): boolean {
  if (err instanceof RestError) return err.status === undefined || err.status >= 500 || err.status === 429;
  const e = err as { isAxiosError?: boolean; response?: unknown; code?: string };
  return e.isAxiosError === true ? e.response === undefined || e.response === null : false;
}

/**
 * KafkaJS's and the registry client's errors as the shared classification sees them (registered
 * with classifyError by this package's entry point): what KafkaJS marks retriable (a broker down,
 * a leader moving) and a registry that does not answer are a dependency down; KafkaJS's other
 * errors (retries exhausted included) are final. Network errors are classified in core.
 */
export function recogniseKafkaError(err: unknown): ClassifiedError | undefined {
  if (isTransientRegistryError(err)) return classified('transient', 'REGISTRY_UNAVAILABLE');
  if (err instanceof KafkaUnsentMessagesError) return classified('transient', err.name);
  if (!(err instanceof Error) || !err.name.startsWith('KafkaJS')) return undefined;
  return classified((err as { retriable?: unknown }).retriable === true ? 'transient' : 'other', err.name);
}
