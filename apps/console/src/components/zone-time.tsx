const LOCAL = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(?:\.\d+)?(Z|[+-]\d\d:\d\d)$/;

/** The UTC offset of a local time as the API writes it (`…T03:00:00-04:00` → `-04:00`). */
export function offsetOf(local: string): string | undefined {
  const m = LOCAL.exec(local);
  return m ? (m[3] === 'Z' ? '+00:00' : m[3]) : undefined;
}

/** `-04:00` as `UTC−04:00` (a real minus sign reads better). */
export const utcOffset = (offset: string) => `UTC${offset.replace('-', '−')}`;

/**
 * A wall-clock time in the schedule's zone as the API gives it (`2026-03-08T03:00:00-04:00`):
 * date, time and the zone's offset then, written out, so a DST change shows in the offset.
 */
export function ZoneTime({ local }: { local: string }) {
  const m = LOCAL.exec(local);
  if (!m) return <span>{local}</span>;
  return (
    <span class="zone-time">
      {m[1]} {m[2]} <span class="muted">{utcOffset(offsetOf(local) ?? '')}</span>
    </span>
  );
}
