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

/** The local wall-clock time `hh:mm:ss` (of a refresh, say). */
export function clock(ms: number): string {
  return new Date(ms).toLocaleTimeString(undefined, { hour12: false });
}

/** `datetime-local` input value (local time) ⇄ the API's ISO instant. */
export const toLocalInput = (iso: string) => {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
};
export const fromLocalInput = (v: string) => (v ? new Date(v).toISOString() : '');
