import type { z } from 'zod';
import type { FieldError } from './errors.js';

/** `a.b.0` from a prefix and a path; '' when both are empty. */
export function joinPath(prefix: string, path: readonly PropertyKey[]): string {
  return [prefix, ...path.map(String)].filter((p) => p !== '').join('.');
}

/** One FieldError per zod issue; an unknown key is named itself (`jobs.3.colour`), not its parent. */
export function fieldErrorsOf(error: z.ZodError, pathPrefix = ''): FieldError[] {
  return error.issues.map((i) => ({
    field: joinPath(pathPrefix, i.code === 'unrecognized_keys' ? [...i.path, ...i.keys] : i.path) || '(body)',
    message: i.message,
  }));
}
