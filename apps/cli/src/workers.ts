import { Command } from 'commander';
import { contextOf } from './context.js';

interface WorkerGroup {
  group: string;
  services: string[];
  resource_classes: string[];
  job_types: string[];
  state: string;
  members: number;
  lag: number;
  last_seen_at: string | null;
  workers: { worker_id: string; host: string; live: boolean; last_seen_at: string }[];
}

/** Worker services (`GET /v1/workers`) and retiring a group no service uses (an admin key of every tenant). */
export function workersCommand(): Command {
  const workers = new Command('workers')
    .description(
      'worker services: groups, classes, handled job types, members, lag, last seen (an admin key of every tenant)',
    )
    .action(async (_o, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const r = await api.get<{ groups: WorkerGroup[] }>('/v1/workers');
      if (out.data(r)) return;
      if (r.groups.length === 0) return out.line('no worker service has run here yet');
      out.table(
        r.groups.map((g) => ({
          group: g.group,
          service: g.services.join(', '),
          classes: g.resource_classes.join(', '),
          types: g.job_types.join(', '),
          members: g.members,
          live: g.workers.filter((w) => w.live).length,
          lag: g.lag,
          last_seen: g.last_seen_at ?? '-',
        })),
        ['group', 'service', 'classes', 'types', 'members', 'live', 'lag', 'last_seen'],
      );
    });
  workers
    .command('retire <group>')
    .description('remove a worker group no service uses any more (refused while it has members)')
    .action(async (group: string, _o, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const g = await api.call<WorkerGroup>('DELETE', `/v1/workers/${encodeURIComponent(group)}`);
      if (!out.data(g))
        out.line(`${g.group} retired: its offsets and its ${g.workers.length} worker record(s) are gone`);
    });
  return workers;
}
