import { ERROR_CODES, isKairosError, type FieldError } from '@kairos/core';
import type { FastifyError, FastifyReply } from 'fastify';

// A small copy of apps/api's problem mapping: apps do not import each other.

/** RFC 9457 problem details; `errors` lists every failing field. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: string;
  readonly errors?: readonly FieldError[];
}

export function problem(
  code: string,
  status: number,
  detail: string,
  errors?: readonly FieldError[],
): Problem {
  return {
    type: `https://kairos.dev/problems/${code.toLowerCase().replaceAll('_', '-')}`,
    title: code,
    status,
    detail,
    code,
    ...(errors && errors.length > 0 ? { errors } : {}),
  };
}

export function sendProblem(reply: FastifyReply, p: Problem): FastifyReply {
  return reply.code(p.status).type('application/problem+json').send(p);
}

/** KairosErrors by code, Fastify's own 4xx (bad JSON, too large) by status, the rest as 500. */
export function toProblem(err: unknown): Problem {
  if (isKairosError(err)) return problem(err.code, ERROR_CODES[err.code].status, err.message, err.fields);
  const fe = err as Partial<FastifyError>;
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    const detail = fe.message ?? 'bad request';
    const code = fe.statusCode === 413 ? 'PAYLOAD_TOO_LARGE' : 'VALIDATION';
    return problem(code, fe.statusCode, detail, [{ field: '(body)', message: detail }]);
  }
  return problem('INTERNAL', 500, 'internal error; see the server log');
}
