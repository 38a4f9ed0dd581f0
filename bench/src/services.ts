import { resolve } from 'node:path';
import { ensureLocalStack, servicesFromEnv, stackConfigFromEnv, type HarnessServices } from '@kairos/ops';

/** The KAIROS_* URLs if all are set, else the local stack (started if needed). */
export async function benchServices(root: string, log: (line: string) => void): Promise<HarnessServices> {
  return servicesFromEnv(process.env) ?? (await ensureLocalStack(stackConfigFromEnv(root), log));
}

export const ROOT = resolve(import.meta.dirname, '..', '..');

/** The local stack's data folder (`.kairos`, or KAIROS_STACK_DIR): where its pid files are. */
export function stackDir(root: string): string {
  return stackConfigFromEnv(root).dataDir;
}
