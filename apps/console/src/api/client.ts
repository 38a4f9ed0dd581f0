import { clearKey, storedKey } from '../session.js';

/** One field of a 400 answer: which parameter and what is wrong with it. */
export interface FieldError {
  readonly field: string;
  readonly message: string;
}

/** An answer that is not 2xx, as the API's problem details (RFC 9457) describe it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly fields: readonly FieldError[] = [],
  ) {
    super(detail);
    this.name = 'ApiError';
  }
}

/** Told when the key is refused (401): the console goes back to the login page. */
let onUnauthenticated: () => void = () => undefined;
export function whenUnauthenticated(f: () => void): void {
  onUnauthenticated = f;
}

type Query = Record<string, string | number | boolean | undefined | null>;

/** `path` with the query's set values (empty strings left out). */
export function withQuery(path: string, query: Query = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query))
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

async function problemOf(res: Response): Promise<ApiError> {
  try {
    const p = (await res.json()) as { code?: string; detail?: string; errors?: FieldError[] };
    return new ApiError(res.status, p.code ?? 'HTTP', p.detail ?? res.statusText, p.errors ?? []);
  } catch {
    return new ApiError(res.status, 'HTTP', `${res.status} ${res.statusText}`);
  }
}

/**
 * Calls the API with the session's key. Every action of the console goes through here: the
 * public API, same origin, nothing else.
 */
export async function call<T>(method: string, path: string, body?: unknown, key = storedKey()): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(path, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status === 401 && key === storedKey()) {
    clearKey();
    onUnauthenticated();
  }
  if (!res.ok) throw await problemOf(res);
  return (await res.json()) as T;
}

export const api = {
  get: <T>(path: string, query?: Query) => call<T>('GET', withQuery(path, query)),
  post: <T>(path: string, body?: unknown) => call<T>('POST', path, body ?? {}),
  patch: <T>(path: string, body: unknown) => call<T>('PATCH', path, body),
  del: <T>(path: string) => call<T>('DELETE', path),
};
