import { SingleBar } from 'cli-progress';
import { Command } from 'commander';
import { query, type ApiClient } from './api-client.js';
import { contextOf, jobFilters, withJobFilters } from './context.js';
import { rewindCommand } from './dlq-rewind.js';
import type { Out } from './output.js';

interface Replay {
  id: string;
  state: string;
  selected: number;
  replayed: number;
  rate_per_sec: number;
  audit?: { action: string; actor: string; at: string }[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Follows a replay to its end with a progress bar (rate and ETA); JSON: the final state only. */
async function follow(api: ApiClient, out: Out, id: string): Promise<Replay> {
  let r = await api.get<Replay>(`/v1/replays/${id}`);
  const bar = out.json
    ? undefined
    : new SingleBar({
        format: 'replay {bar} {value}/{total} | {rate}/s | ETA {eta}s | {state}',
        hideCursor: true,
      });
  bar?.start(r.selected, r.replayed, { rate: 0, state: r.state });
  const start = Date.now();
  const from = r.replayed;
  while (r.state === 'RUNNING') {
    await sleep(500);
    r = await api.get<Replay>(`/v1/replays/${id}`);
    const rate = ((r.replayed - from) * 1000) / Math.max(1, Date.now() - start);
    bar?.update(r.replayed, { rate: rate.toFixed(1), state: r.state });
  }
  bar?.stop();
  return r;
}

export function dlqCommand(): Command {
  const dlq = new Command('dlq').description('dead letters (FAILED jobs) and their replay');

  withJobFilters(dlq.command('list').description('dead letters, newest first'))
    .option('--limit <n>', 'per page', '50')
    .action(async (o: Record<string, string | undefined>, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const r = await api.get<{ dead_letters: Record<string, unknown>[] }>(
        `/v1/dead-letters${query({ ...jobFilters(o), limit: o.limit })}`,
      );
      if (!out.data(r)) {
        out.table(r.dead_letters, [
          'id',
          'tenant',
          'type',
          'resource_class',
          'last_failure_class',
          'last_error',
          'finished_at',
        ]);
      }
    });

  withJobFilters(
    dlq.command('replay').description('replay dead letters as new jobs: a dry run unless --confirm'),
  )
    .option('--rate <n>', 'jobs per second', '10')
    .option('--confirm', 'send them (without it: a dry run, nothing changes)')
    .option('--resume <id>', 'follow a replay already running (it resumes by itself after a crash)')
    .action(async (o: Record<string, string | undefined> & { confirm?: boolean }, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      if (o.resume) return done(out, await follow(api, out, o.resume));
      const filter = Object.fromEntries(Object.entries(jobFilters(o)).filter(([, v]) => v !== undefined));
      if (!o.confirm) {
        const dry = await api.post<{ total: number; groups: Record<string, unknown>[]; sample: string[] }>(
          '/v1/dead-letters:replay',
          { filter },
        );
        if (out.data(dry)) return;
        out.table(dry.groups, ['tenant', 'type', 'resource_class', 'count']);
        out.line(
          `dry run: ${dry.total} dead letter(s) would be replayed; nothing changed. Add --confirm to send them.`,
        );
        return;
      }
      const r = await api.post<Replay>('/v1/dead-letters:replay', {
        filter,
        dry_run: false,
        rate_per_sec: Number(o.rate),
      });
      if (!out.json)
        out.line(
          `replay ${r.id}: ${r.selected} dead letter(s) at ${r.rate_per_sec}/s (follow again: --resume ${r.id})`,
        );
      done(out, await follow(api, out, r.id));
    });

  dlq
    .command('cancel <id>')
    .description('cancel a running replay (what was sent stays)')
    .action(async (id: string, _o, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const r = await api.post<Replay>(`/v1/replays/${encodeURIComponent(id)}/cancel`);
      if (!out.data(r)) out.line(`${r.id} ${r.state} after ${r.replayed} of ${r.selected}`);
    });

  dlq
    .command('replays')
    .description('replays, newest first')
    .action(async (_o, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const r = await api.get<{ replays: Record<string, unknown>[] }>('/v1/replays');
      if (!out.data(r))
        out.table(r.replays, [
          'id',
          'tenant',
          'state',
          'selected',
          'replayed',
          'rate_per_sec',
          'created_by',
          'created_at',
        ]);
    });
  dlq.addCommand(rewindCommand());
  return dlq;
}

function done(out: Out, r: Replay): void {
  if (!out.data(r)) out.line(`replay ${r.id} ${r.state}: ${r.replayed} of ${r.selected} replayed`);
  if (r.state !== 'DONE') process.exitCode = 5;
}
