import { Command } from 'commander';
import { query } from './api-client.js';
import { contextOf } from './context.js';
import { record } from './output.js';

type Schedule = Record<string, unknown> & { id: string };

/** A subcommand that posts to /v1/schedules/{id}/<action> and prints the schedule or run. */
function action(
  parent: Command,
  name: string,
  description: string,
  body: (o: Record<string, unknown>) => unknown,
) {
  return parent
    .command(`${name} <id>`)
    .description(description)
    .action(async (id: string, o: Record<string, unknown>, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const r = await api.post<Schedule>(`/v1/schedules/${encodeURIComponent(id)}/${name}`, body(o));
      if (!out.data(r)) out.line(`${r.id} ${String(r.state)}`);
    });
}

export function schedulesCommand(): Command {
  const s = new Command('schedules').description('recurring schedules');
  s.command('list')
    .option('--tenant <tenant>')
    .option('--limit <n>', 'schedules per page', '50')
    .action(async (o: Record<string, string | undefined>, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const r = await api.get<{ schedules: Schedule[] }>(
        `/v1/schedules${query({ tenant: o.tenant, limit: o.limit })}`,
      );
      if (!out.data(r))
        out.table(r.schedules, [
          'id',
          'tenant',
          'cron',
          'time_zone',
          'state',
          'health',
          'next_fire',
          'version',
        ]);
    });
  s.command('get <id>').action(async (id: string, _o, cmd: Command) => {
    const { api, out } = contextOf(cmd);
    const r = await api.get<Schedule>(`/v1/schedules/${encodeURIComponent(id)}`);
    if (!out.data(r)) record(out, r);
  });
  s.command('preview <id>')
    .description('the next fire times, in the schedule’s zone (DST shifts marked)')
    .option('--count <n>', 'how many', '10')
    .action(async (id: string, o: { count: string }, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const r = await api.get<{ fire_times: Record<string, unknown>[] }>(
        `/v1/schedules/${encodeURIComponent(id)}/preview${query({ count: o.count })}`,
      );
      if (!out.data(r)) out.table(r.fire_times, ['local', 'instant', 'kind', 'fire_at']);
    });
  action(s, 'pause', 'pause: no regular run until resume', () => ({}));
  action(s, 'resume', 'resume a paused schedule', () => ({})).option(
    '--catch-up',
    'run what came due while paused',
  );
  action(s, 'trigger', 'run it once now', () => ({}));
  s.command('backfill <id>')
    .description('run the occurrences of a past range')
    .requiredOption('--from <time>')
    .requiredOption('--to <time>')
    .action(async (id: string, o: { from: string; to: string }, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const r = await api.post<{ created: number; requested: number }>(
        `/v1/schedules/${encodeURIComponent(id)}/backfill`,
        { from: o.from, to: o.to },
      );
      if (!out.data(r)) out.line(`backfill: ${r.created} of ${r.requested} runs created`);
    });
  return s;
}
