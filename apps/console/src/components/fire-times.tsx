import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/client.js';
import type { FireTime, Schedule, SchedulePreview } from '../api/types.js';
import type { QueryState } from '../hooks/use-query-state.js';
import { useResource } from '../hooks/use-resource.js';
import { ErrorNote } from './error-note.js';
import { Time } from './time.js';
import { offsetOf, utcOffset, ZoneTime } from './zone-time.js';
import { TableHead } from './table-head.js';
import { TableWrap } from './table-wrap.js';

const minutes = (offset: string) => {
  const [h = 0, m = 0] = offset.slice(1).split(':').map(Number);
  return (offset.startsWith('-') ? -1 : 1) * (h * 60 + m);
};
/** `2026-03-08T02:30:00[America/New_York]` → `02:30:00` (the wall time the cron asked for). */
const nominalTime = (nominal: string) => /T([\d:]+)/.exec(nominal)?.[1] ?? nominal;

/**
 * What a fire time's DST situation is, in words. The API marks shifted and repeated times by
 * kind; a time the `skip` gap policy dropped is simply absent, so a change of the zone's offset
 * since the previous fire time is told too, with what `skip` means for it.
 */
export function dstNotes(f: FireTime, prev: FireTime | undefined, gap: 'shift' | 'skip'): string[] {
  const notes: string[] = [];
  if (f.kind === 'gap-shifted')
    notes.push(`shifted (DST gap): ${nominalTime(f.nominal)} does not exist that day`);
  if (f.kind === 'overlap-first') notes.push('repeated hour (DST overlap): the earlier of the two');
  if (f.kind === 'overlap-last') notes.push('repeated hour (DST overlap): the later of the two');
  const was = prev && offsetOf(prev.local);
  const now = offsetOf(f.local);
  if (was && now && was !== now) {
    notes.push(`clocks changed since the previous time (${utcOffset(was)} → ${utcOffset(now)})`);
    if (gap === 'skip' && minutes(now) > minutes(was))
      notes.push('skipped (DST gap): with dst.gap "skip", a time in the missing hour does not run');
  }
  return notes;
}

/** `from` (a date, the user's time zone) as the preview's `after` instant. */
const afterOf = (from: string | undefined) => {
  if (!from) return undefined;
  const d = new Date(`${from}T00:00:00`);
  return Number.isNaN(d.getTime()) ? from : d.toISOString();
};

function PreviewForm({ q }: { q: QueryState }) {
  const [from, setFrom] = useState(q.query.from ?? '');
  const [count, setCount] = useState(q.query.count ?? '10');
  useEffect(() => setFrom(q.query.from ?? ''), [q.query.from]);
  return (
    <form
      class="actions toolbar sched-toolbar"
      aria-label="Preview range"
      onSubmit={(e) => {
        e.preventDefault();
        q.set({ from, count });
      }}
    >
      <label for="preview-from">
        From (date, your time zone)
        <input id="preview-from" type="date" value={from} onInput={(e) => setFrom(e.currentTarget.value)} />
      </label>
      <label for="preview-count">
        How many
        <input
          id="preview-count"
          type="number"
          min={1}
          max={100}
          value={count}
          onInput={(e) => setCount(e.currentTarget.value)}
        />
      </label>
      <button type="submit">Preview</button>
    </form>
  );
}

function FireRow({ f, prev, s }: { f: FireTime; prev: FireTime | undefined; s: Schedule }) {
  const notes = dstNotes(f, prev, s.dst?.gap ?? 'shift');
  return (
    <tr class={notes.length > 0 ? 'dst-row' : undefined}>
      {/* The marks sit under the time they qualify, so a phone shows them without scrolling. */}
      <td>
        <ZoneTime local={f.local} />
        {notes.map((n) => (
          <strong key={n} class="dst-mark">
            {n}
          </strong>
        ))}
      </td>
      <td>
        <Time at={f.instant} />
      </td>
      {(s.jitter_ms ?? 0) > 0 && (
        <td>
          <Time at={f.fire_at} />
        </td>
      )}
    </tr>
  );
}

/** The schedule's next fire times from a chosen date, DST days marked in words. */
export function FireTimes({ s, q, tick }: { s: Schedule; q: QueryState; tick: number }) {
  const after = afterOf(q.query.from);
  const count = q.query.count;
  const r = useResource(
    () => api.get<SchedulePreview>(`/v1/schedules/${encodeURIComponent(s.id)}/preview`, { count, after }),
    [s.id, after, count, tick],
  );
  const times = r.data?.fire_times ?? [];
  const jitter = (s.jitter_ms ?? 0) > 0;
  const columns = [
    `In ${s.time_zone} (DST marked)`,
    'Your time',
    ...(jitter ? ['Fires at (with jitter)'] : []),
  ];
  return (
    <section aria-labelledby="fire-times">
      <h2 id="fire-times">Next fire times</h2>
      <PreviewForm q={q} />
      <ErrorNote error={r.error} />
      <div aria-busy={r.loading} aria-live="polite">
        <TableWrap label="Fire time list">
          <table class="striped">
            <caption class="visually-hidden">Next fire times in {s.time_zone}</caption>
            <TableHead columns={columns} />
            <tbody>
              {times.map((f, i) => (
                <FireRow key={`${f.nominal}-${f.instant}`} f={f} prev={times[i - 1]} s={s} />
              ))}
            </tbody>
          </table>
        </TableWrap>
      </div>
      {r.data && times.length === 0 && <p>No fire times (the schedule has ended).</p>}
    </section>
  );
}
