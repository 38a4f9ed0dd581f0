import type { Access } from '@kairos/core';
import type { FastifySchema } from 'fastify';
import { z } from 'zod';

type Json = Record<string, unknown>;

/** JSON Schema (2020-12, as OpenAPI 3.1 has it) of a zod schema; refinements stay in the code. */
export function jsonOf(schema: z.ZodType, io: 'input' | 'output' = 'output'): Json {
  const { $schema: _drop, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Json;
  return json;
}

/** A schema added to the server with addSchema (becomes components/schemas/<id>). */
export const ref = (id: string): Json => ({ $ref: `${id}#` });

const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ref('Problem') } },
});

const ERRORS = {
  400: problem('invalid input: `errors` names every failing field or parameter'),
  401: problem('UNAUTHENTICATED: no API key, or one that is unknown, revoked or expired'),
  403: problem('FORBIDDEN: the key lacks the scope, or names another tenant than its own'),
  404: problem("NOT_FOUND: no such thing for this key's tenant (another tenant's is not found either)"),
  409: problem('CONFLICT: the state does not allow it (the detail names the state)'),
  413: problem('PAYLOAD_TOO_LARGE: the body is over the limit'),
  415: problem('UNSUPPORTED_MEDIA_TYPE: send application/json'),
  429: problem('RATE_LIMITED: the key used up its requests for this second; see Retry-After'),
  503: problem('DEPENDENCY_UNAVAILABLE: PostgreSQL or the schema registry is down; retry'),
} as const;

export type ErrorStatus = keyof typeof ERRORS;

export interface RouteDoc {
  readonly summary: string;
  readonly tag: 'jobs' | 'schedules' | 'dead letters' | 'keys' | 'health';
  readonly description?: string;
  readonly body?: Json;
  readonly query?: Json;
  /** Path parameters, each a string (`id` of a job, a schedule, a key). */
  readonly params?: readonly string[];
  /** Success answers: status → description and body schema (none: no body). */
  readonly ok: Readonly<Record<number, { readonly description: string; readonly schema?: Json }>>;
  /** Answers beyond 401, 403, 429 and 503 (every authenticated route has those). */
  readonly errors?: readonly ErrorStatus[];
  /** Needs no key (then it has none of the authentication answers). */
  readonly public?: boolean;
}

/** A system route's 403: the key is not the system admin, whatever its scopes. */
const SYSTEM_403 = problem(
  "FORBIDDEN: not an admin key of every tenant ('*'); a tenant's admin key is refused too",
);

/** What a system route's description says first. */
const SYSTEM_NOTE =
  "**System:** acts on or shows the whole deployment, so it needs an admin key of every tenant ('*'); a tenant's admin key gets 403.";

/** The Fastify route schema of a documented route (read by @fastify/swagger, not used to validate). */
export function schemaOf(d: RouteDoc, scope: Access | 'public' | 'any'): FastifySchema {
  const anyKey = scope === 'any';
  const response: Json = {};
  for (const [status, o] of Object.entries(d.ok)) {
    response[status] = o.schema
      ? { description: o.description, content: { 'application/json': { schema: o.schema } } }
      : { description: o.description, type: 'null' };
  }
  // A route any valid key may call has no 403.
  const auth: readonly ErrorStatus[] = d.public ? [] : anyKey ? [401, 429, 503] : [401, 403, 429, 503];
  const errors: ErrorStatus[] = [...(d.errors ?? []), ...auth];
  for (const status of errors.sort()) response[status] = ERRORS[status];
  if (scope === 'system') response[403] = SYSTEM_403;
  const description =
    scope === 'system' ? [SYSTEM_NOTE, d.description].filter(Boolean).join('\n\n') : d.description;
  return {
    summary: d.summary,
    tags: [d.tag],
    ...(description && { description }),
    ...(d.public && { security: [] }),
    ...(d.body && { body: d.body }),
    ...(d.query && { querystring: d.query }),
    ...(d.params && {
      params: {
        type: 'object',
        properties: Object.fromEntries(d.params.map((p) => [p, { type: 'string' }])),
        required: [...d.params],
      },
    }),
    response,
  };
}

/** The options of a documented route: who may call it (access.ts), and its schema. */
export function documented(scope: Access | 'public' | 'any', d: RouteDoc) {
  return { config: { scope }, schema: schemaOf(d, scope) };
}

/** A request body whose `tenant` the key supplies: optional in the document. */
export function tenantFromKey(json: Json): Json {
  const required = Array.isArray(json.required) ? (json.required as string[]) : [];
  const properties = (json.properties ?? {}) as Record<string, Json>;
  return {
    ...json,
    required: required.filter((r) => r !== 'tenant'),
    properties: {
      ...properties,
      tenant: {
        ...properties.tenant,
        description: "the key's tenant when left out; a key of every tenant must give it",
      },
    },
  };
}

/** The query schema of a GET: every parameter a string, as a URL has it. */
export function queryOf(schema: z.ZodType): Json {
  return jsonOf(schema, 'input');
}
