import type { CliConfig } from './config.js';

/** An answer of the API that is not a success: its status and problem (code, detail, errors). */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly problem: { code?: string; detail?: string; errors?: { field: string; message: string }[] },
  ) {
    const fields = (problem.errors ?? []).map((e) => `\n  ${e.field}: ${e.message}`).join('');
    super(`${status} ${problem.code ?? ''}: ${problem.detail ?? ''}${fields}`);
  }
}

/** The CLI's one way to call the API: JSON in, JSON out, the key as a bearer token. */
export class ApiClient {
  constructor(readonly config: CliConfig) {}

  async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = {};
    if (this.config.key) headers.authorization = `Bearer ${this.config.key}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: Response;
    try {
      res = await fetch(`${this.config.url}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (err) {
      const why = (err as Error & { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
      throw new Error(`cannot reach the API at ${this.config.url}: ${why}`, { cause: err });
    }
    const text = await res.text();
    const json = (text === '' ? {} : JSON.parse(text)) as T & ApiError['problem'];
    if (!res.ok) throw new ApiError(res.status, json);
    return json;
  }

  get<T>(path: string): Promise<T> {
    return this.call<T>('GET', path);
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.call<T>('POST', path, body);
  }
}

/** A query string of the set options (undefined ones left out). */
export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}
