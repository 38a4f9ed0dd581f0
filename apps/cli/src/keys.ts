import { Command } from 'commander';
import { contextOf } from './context.js';

type Key = Record<string, unknown> & { id: string };

export function keysCommand(): Command {
  const keys = new Command('keys').description(
    "API keys (needs an admin key; a tenant's admin manages its tenant's keys only)",
  );
  keys
    .command('create')
    .requiredOption('--name <name>')
    .requiredOption(
      '--scopes <scopes>',
      'comma-separated: jobs:read, jobs:write, schedules:read, schedules:write, dlq:read, dlq:replay, admin',
    )
    .option('--tenant <tenant>', "a tenant or '*' (default: your key's)")
    .option('--expires-at <time>', "no later than your key's expiry (default: your key's)")
    .option('--rate <n>', "requests per second, at most your key's rate (default: your key's)")
    .action(async (o: Record<string, string | undefined>, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const k = await api.post<Key & { key: string }>('/v1/keys', {
        name: o.name,
        scopes: (o.scopes ?? '').split(',').map((s) => s.trim()),
        ...(o.tenant && { tenant: o.tenant }),
        ...(o.expiresAt && { expires_at: o.expiresAt }),
        ...(o.rate && { rate_per_sec: Number(o.rate) }),
      });
      if (out.data(k)) return;
      out.line(
        `key ${k.id} (${String(k.name)}, tenant ${String(k.tenant)}); shown this once, keep it secret:`,
      );
      out.line(k.key);
    });
  keys.command('list').action(async (_o, cmd: Command) => {
    const { api, out } = contextOf(cmd);
    const r = await api.get<{ keys: Key[] }>('/v1/keys');
    if (!out.data(r))
      out.table(r.keys, ['id', 'name', 'tenant', 'scopes', 'rate_per_sec', 'expires_at', 'revoked_at']);
  });
  keys
    .command('revoke <id>')
    .option('--cascade', 'also revoke every key it made, and the keys those made')
    .action(async (id: string, o: { cascade?: boolean }, cmd: Command) => {
      const { api, out } = contextOf(cmd);
      const query = o.cascade ? '?cascade=true' : '';
      const k = await api.call<Key & { cascaded?: string[] }>(
        'DELETE',
        `/v1/keys/${encodeURIComponent(id)}${query}`,
      );
      if (out.data(k)) return;
      out.line(`${k.id} revoked at ${String(k.revoked_at)}`);
      if (k.cascaded?.length) out.line(`revoked with it: ${k.cascaded.join(', ')}`);
    });
  return keys;
}
