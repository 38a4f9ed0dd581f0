import { classifyError, ERROR_CODES, isKairosError, type FieldError } from '@kairos/core';
import type { FastifyError, FastifyReply } from 'fastify';

/** RFC 9457 problem details; `errors` lists every failing field. */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: string;
  readonly errors?: readonly FieldError[];
}

export function sendProblem(reply: FastifyReply, problem: Problem): FastifyReply {
  return reply.code(problem.status).type('application/problem+json').send(problem);
}

/** Maps any error to a problem: KairosErrors by code, Fastify's own (bad JSON, too large) by status. */
export function toProblem(err: unknown): Problem {
  if (isKairosError(err)) {
    return {
      type: `https://kairos.dev/problems/${err.code.toLowerCase().replaceAll('_', '-')}`,
      title: err.code,
      status: ERROR_CODES[err.code].status,
      detail: err.message,
      code: err.code,
      // `rule` is the Kafka ingress's rejection reason; HTTP answers with the status and code.
      ...(err.fields.length > 0
        ? { errors: err.fields.map(({ field, message }) => ({ field, message })) }
        : {}),
    };
  }
  // An outage of PostgreSQL, the registry (or any dependency) is a retriable 503, not a bug.
  if (classifyError(err).class === 'transient') {
    return {
      type: 'https://kairos.dev/problems/dependency-unavailable',
      title: 'DEPENDENCY_UNAVAILABLE',
      status: 503,
      detail: 'a dependency (PostgreSQL or the schema registry) is unavailable; retry later',
      code: 'DEPENDENCY_UNAVAILABLE',
    };
  }
  const fe = err as Partial<FastifyError>;
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    const code = fe.statusCode === 413 ? 'PAYLOAD_TOO_LARGE' : 'VALIDATION';
    return {
      type: `https://kairos.dev/problems/${code.toLowerCase().replaceAll('_', '-')}`,
      title: code,
      status: fe.statusCode,
      detail: fe.message ?? 'bad request',
      code,
      errors: [{ field: '(body)', message: fe.message ?? 'bad request' }],
    };
  }
  return {
    type: 'https://kairos.dev/problems/internal',
    title: 'INTERNAL',
    status: 500,
    detail: 'internal error; see the server log',
    code: 'INTERNAL',
  };
}
