import type { ServiceState } from './stack.js';

export function formatStates(states: readonly ServiceState[]): string {
  const rows = states.map((s) => [
    s.name,
    s.healthy ? 'healthy' : 'DOWN',
    s.pid !== undefined ? String(s.pid) : s.healthy ? 'external' : '-',
    s.rssMiB !== undefined ? `${s.rssMiB} MiB` : '-',
    s.action ? `${s.action}${s.seconds !== undefined ? ` (${s.seconds.toFixed(1)} s)` : ''}` : '',
    s.listens,
  ]);
  const head = ['service', 'state', 'pid', 'rss', 'action', 'listens on'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [line(head), ...rows.map(line)].join('\n');
}
