import { Command } from 'commander';
import { query } from './api-client.js';
import { UsageError } from './config.js';
import { contextOf, jobFilters, withJobFilters } from './context.js';
import { record } from './output.js';

type Job = Record<string, unknown> & { id: string };
const JOB_COLUMNS = ['id', 'tenant', 'type', 'resource_class', 'state', 'due_at', 'attempt', 'last_error'];

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${what} is not JSON: ${(err as Error).message}`);
  }
}

export function jobsCommand(): Command {
  const jobs = new Command('jobs').description(
    'one-time jobs: find, inspect, create, cancel, reschedule, re-run',
  );

  withJobFilters(jobs.command('list').description('search jobs, newest first'))
    .option('--state <states>', 'states, comma-separated (SCHEDULED, QUEUED, RUNNING, SUCCEEDED, FAILED, …)')
    .option('--limit <n>', 'jobs per page (1–500)', '50')
    .option('--all', 'follow every page')
    .action(async (o: Record<string, string | undefined> & { all?: boolean }, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const all: Job[] = [];
      let cursor: string | undefined;
      do {
        const page = await api.get<{ jobs: Job[]; next_cursor: string | null }>(
          `/v1/jobs${query({ ...jobFilters(o), state: o.state, limit: o.limit, cursor })}`,
        );
        all.push(...page.jobs);
        cursor = o.all ? (page.next_cursor ?? undefined) : undefined;
      } while (cursor !== undefined);
      if (!out.data({ jobs: all })) out.table(all, JOB_COLUMNS);
    });

  jobs
    .command('get <id>')
    .description('one job, every field')
    .action(async (id: string, _o, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const job = await api.get<Job>(`/v1/jobs/${encodeURIComponent(id)}`);
      if (!out.data(job)) record(out, job);
    });

  jobs
    .command('attempts <id>')
    .description('every attempt of a job: fence, worker, outcome, error')
    .action(async (id: string, _o, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const r = await api.get<{ attempts: Record<string, unknown>[] }>(
        `/v1/jobs/${encodeURIComponent(id)}/attempts`,
      );
      if (!out.data(r)) {
        out.table(r.attempts, [
          'attempt',
          'fence',
          'worker_id',
          'outcome',
          'failure_class',
          'error_message',
          'started_at',
          'finished_at',
        ]);
      }
    });

  jobs
    .command('create')
    .description('create a job')
    .requiredOption('--type <type>')
    .option('--class <class>', 'resource class', 'default')
    .option('--tenant <tenant>', "the tenant (default: the key's)")
    .option('--payload <json>', 'the payload, JSON', '{}')
    .option('--due-at <time>', 'ISO-8601 with offset')
    .option('--delay-ms <ms>', 'due this long from now')
    .option('--idempotency-key <key>')
    .option('--max-attempts <n>')
    .action(async (o: Record<string, string | undefined>, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const job = await api.post<Job>('/v1/jobs', {
        type: o.type,
        resource_class: o.class,
        payload: parseJson(o.payload ?? '{}', '--payload'),
        ...(o.tenant && { tenant: o.tenant }),
        ...(o.dueAt && { due_at: o.dueAt }),
        ...(o.delayMs && { delay_ms: Number(o.delayMs) }),
        ...(o.idempotencyKey && { idempotency_key: o.idempotencyKey }),
        ...(o.maxAttempts && { max_attempts: Number(o.maxAttempts) }),
      });
      if (!out.data(job)) out.line(`created ${job.id} (${String(job.state)}, due ${String(job.due_at)})`);
    });

  jobs.command('cancel <id>').action(async (id: string, _o, cmd: Command) => {
    const { api, out } = contextOf(cmd);
    const job = await api.call<Job>('DELETE', `/v1/jobs/${encodeURIComponent(id)}`);
    if (!out.data(job)) out.line(`${job.id} ${String(job.state)}`);
  });

  jobs
    .command('reschedule <id>')
    .option('--due-at <time>')
    .option('--delay-ms <ms>')
    .action(async (id: string, o: Record<string, string | undefined>, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const body = { ...(o.dueAt && { due_at: o.dueAt }), ...(o.delayMs && { delay_ms: Number(o.delayMs) }) };
      const job = await api.post<Job>(`/v1/jobs/${encodeURIComponent(id)}/reschedule`, body);
      if (!out.data(job)) out.line(`${job.id} due ${String(job.due_at)} (version ${String(job.version)})`);
    });

  jobs
    .command('rerun <id>')
    .description('run a finished job again, as a new job')
    .action(async (id: string, _o, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const job = await api.post<Job>(`/v1/jobs/${encodeURIComponent(id)}/rerun`);
      if (!out.data(job)) out.line(`created ${job.id} (replay_of ${String(job.replay_of)})`);
    });
  return jobs;
}
