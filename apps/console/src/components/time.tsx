/** A time as the user's local date and time, the exact instant in its title. */
export function Time({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">—</span>;
  const d = new Date(at);
  return (
    <time dateTime={at} title={at}>
      {d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' })}
    </time>
  );
}

/** `b - a` in a short human form (ms, s, min), or — when either is missing. */
export function span(a: string | null | undefined, b: string | null | undefined): string {
  if (!a || !b) return '—';
  return duration(new Date(b).getTime() - new Date(a).getTime());
}

export function duration(ms: number): string {
  const sign = ms < 0 ? '−' : '';
  const v = Math.abs(ms);
  if (v < 1000) return `${sign}${Math.round(v)} ms`;
  if (v < 60_000) return `${sign}${(v / 1000).toFixed(v < 10_000 ? 2 : 1)} s`;
  if (v < 3_600_000) return `${sign}${(v / 60_000).toFixed(1)} min`;
  return `${sign}${(v / 3_600_000).toFixed(1)} h`;
}
