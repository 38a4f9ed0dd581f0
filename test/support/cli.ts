import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import type { Pipeline } from './pipeline.js';

const MAIN = resolve(import.meta.dirname, '../../apps/cli/src/main.ts');
const run = promisify(execFile);

export interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** The kairos CLI, spawned as users run it, against the pipeline's API with its admin key. */
export async function kairos(
  p: Pick<Pipeline, 'apiUrl' | 'apiKey'>,
  args: string[],
  env: Record<string, string> = {},
): Promise<Result> {
  try {
    const r = await run(process.execPath, ['--conditions=kairos-source', '--import', 'tsx', MAIN, ...args], {
      env: {
        ...process.env,
        KAIROS_API_URL: p.apiUrl,
        KAIROS_API_KEY: p.apiKey,
        KAIROS_CONFIG: '/nonexistent',
        ...env,
      },
    });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

export const json = <T>(r: Result): T => JSON.parse(r.stdout) as T;
