import { Command } from 'commander';
import { ApiError } from './api-client.js';
import { contextOf } from './context.js';
import { record } from './output.js';

interface SystemStatus {
  services: { name: string; ok: boolean; detail: string; latency_ms: number }[];
  groups: {
    group: string;
    state: string;
    members: { client_id: string; host: string }[];
    lag: number;
    topics: { topic: string; lag: number }[];
  }[];
}

/**
 * The API's health and the key; with an admin key of every tenant (the system admin) also the
 * dependencies, the apps and their consumer lag.
 */
export function statusCommand(): Command {
  return new Command('status')
    .description(
      "is the API up, who is this key; with an admin key of every tenant ('*'): services, apps (consumer groups) and their lag",
    )
    .action(async (_o, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const health = await api.get<{ status: string }>('/healthz');
      const who = await api.get<{ scopes: string[] } & Record<string, unknown>>('/v1/whoami');
      let system: SystemStatus | undefined;
      try {
        system = await api.get<SystemStatus>('/v1/status');
      } catch (err) {
        if (!(err instanceof ApiError && err.status === 403)) throw err;
      }
      const status = { api: api.config.url, health: health.status, key: who, ...system };
      if (system?.services.some((s) => !s.ok)) process.exitCode = 1;
      if (out.data(status)) return;
      record(out, { api: status.api, health: status.health, ...who });
      if (!system)
        return out.line("services, apps and consumer lag: need an admin key of every tenant ('*')");
      out.table(
        system.services.map((s) => ({ ...s, ok: s.ok ? 'up' : 'DOWN' })),
        ['name', 'ok', 'latency_ms', 'detail'],
      );
      out.table(
        system.groups.map((g) => ({
          group: g.group,
          state: g.state,
          instances: g.members.map((m) => m.client_id).join(', '),
          lag: g.lag,
          topics: g.topics.map((t) => `${t.topic}: ${t.lag}`).join(', '),
        })),
        ['group', 'state', 'instances', 'lag', 'topics'],
      );
    });
}
