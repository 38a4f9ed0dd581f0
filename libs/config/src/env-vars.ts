/** Typed reads of environment variables; a bad value is an EnvError naming the variable. */
export class EnvError extends Error {
  override readonly name = 'EnvError';
}

export function intVar(
  env: NodeJS.ProcessEnv,
  name: string,
  fallback: number,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new EnvError(`${name}=${raw} must be an integer in [${min}, ${max}]`);
  return n;
}

export function boolVar(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new EnvError(`${name}=${raw} must be true or false`);
}

export function listVar(env: NodeJS.ProcessEnv, name: string, fallback: string): string[] {
  const list = (env[name] ?? fallback)
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (list.length === 0) throw new EnvError(`${name} must list at least one value`);
  return list;
}
