import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';

/** Where the CLI finds the API and its key. */
export interface CliConfig {
  readonly url: string;
  readonly key: string | undefined;
}

/** The config file: KAIROS_CONFIG, else ~/.config/kairos/config.json (`{"url": …, "key": …}`). */
export function configFile(env: NodeJS.ProcessEnv): string {
  return env.KAIROS_CONFIG ?? resolve(homedir(), '.config', 'kairos', 'config.json');
}

/**
 * The API URL and key: flags first, then KAIROS_API_URL / KAIROS_API_KEY, then the config file;
 * the URL defaults to the local stack's API. A key is never taken from a flag (shell history).
 */
export function loadConfig(env: NodeJS.ProcessEnv, flags: { url?: string | undefined }): CliConfig {
  const path = configFile(env);
  let file: { url?: unknown; key?: unknown } = {};
  if (existsSync(path)) {
    try {
      file = JSON.parse(readFileSync(path, 'utf8')) as typeof file;
    } catch (err) {
      throw new UsageError(`${path} is not valid JSON: ${(err as Error).message}`);
    }
  }
  const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
  return {
    url: (flags.url ?? str(env.KAIROS_API_URL) ?? str(file.url) ?? 'http://127.0.0.1:58090').replace(
      /\/$/,
      '',
    ),
    key: str(env.KAIROS_API_KEY) ?? str(file.key),
  };
}

/** A mistake in how the command was called (exit code 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}
