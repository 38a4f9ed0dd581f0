import { classifyError, ERROR_CODES, isKairosError, type FieldError } from '@kairos/core';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyReply } from 'fastify';

/** RFC 9457 problem details; `code` is stable, `errors` lists every failing field. */
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
    ...(errors && errors.length > 0
      ? { errors: errors.map(({ field, message }) => ({ field, message })) }
      : {}),
  };
}

export function sendProblem(reply: FastifyReply, p: Problem): FastifyReply {
  return reply.code(p.status).type('application/problem+json').send(p);
}

/** Fastify's own 4xx codes that have a stable Kairos code of their own. */
const FRAMEWORK_CODES: Readonly<Record<number, string>> = {
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'RATE_LIMITED',
  431: 'HEADERS_TOO_LARGE',
};

/**
 * Maps any error to a problem: KairosErrors by code; an outage of a dependency as a retriable 503
 * (not a bug); Fastify's own 4xx (bad JSON, too large, wrong media type) by status; the rest 500.
 */
export function toProblem(err: unknown): Problem {
  if (isKairosError(err)) return problem(err.code, ERROR_CODES[err.code].status, err.message, err.fields);
  if (classifyError(err).class === 'transient') {
    return problem(
      'DEPENDENCY_UNAVAILABLE',
      503,
      'a dependency (PostgreSQL or the schema registry) is unavailable; retry later',
    );
  }
  const fe = err as Partial<FastifyError>;
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    const detail = fe.message ?? 'bad request';
    const code = FRAMEWORK_CODES[fe.statusCode] ?? 'VALIDATION';
    return problem(
      code,
      fe.statusCode,
      detail,
      code === 'VALIDATION' ? [{ field: '(body)', message: detail }] : [],
    );
  }
  return problem('INTERNAL', 500, 'internal error; see the server log');
}

/**
 * Answers what Node's HTTP parser refuses before any route sees it (headers too large, a
 * malformed request, a client too slow) with problem+json too, as Fastify's `clientErrorHandler`.
 */
export function clientErrorProblem(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const p =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? problem('HEADERS_TOO_LARGE', 431, 'the request headers are larger than the server accepts')
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? problem('REQUEST_TIMEOUT', 408, 'the request was not received in time')
        : problem('BAD_REQUEST', 400, 'the request is not valid HTTP');
  const body = JSON.stringify(p);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${p.status} ${p.title}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

/** Fastify's `frameworkErrors`: a URL it cannot decode (`/v1/jobs/%ZZ`) is problem+json too. */
export function frameworkErrorProblem(err: Error, _req: unknown, reply: FastifyReply): void {
  void sendProblem(reply, problem('BAD_URL', 400, `the URL is not valid: ${err.message}`));
}
