import { Command } from 'commander';
import { contextOf } from './context.js';
import { record } from './output.js';

/** The API's health and who the key is (services and consumer lag: `npm run stack -- status`). */
export function statusCommand(): Command {
  return new Command('status')
    .description('is the API up, and who is this key')
    .action(async (_o, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const health = await api.get<{ status: string }>('/healthz');
      const who = await api.get<Record<string, unknown>>('/v1/whoami');
      const status = { api: api.config.url, health: health.status, key: who };
      if (!out.data(status)) record(out, { api: status.api, health: status.health, ...who });
    });
}
