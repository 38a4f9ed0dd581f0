import { useState } from 'preact/hooks';
import { api } from '../api/client.js';
import type { Schedule } from '../api/types.js';
import { ErrorNote } from '../components/error-note.js';
import { FireTimes } from '../components/fire-times.js';
import { Layout } from '../components/layout.js';
import { LiveToggle } from '../components/live-toggle.js';
import { ScheduleActions } from '../components/schedule-actions.js';
import { ScheduleHealth, ScheduleRules } from '../components/schedule-rules.js';
import { ScheduleRuns } from '../components/schedule-runs.js';
import { useQueryState } from '../hooks/use-query-state.js';
import { useResource } from '../hooks/use-resource.js';
import { paths } from '../paths.js';

const LIVE_SECONDS = 5;

/** One schedule: its rules, health, actions, next fire times (DST marked) and runs. */
export function SchedulePage({ id }: { id: string }) {
  const q = useQueryState();
  const live = q.query.live === '1' ? LIVE_SECONDS * 1000 : undefined;
  // Bumped after each action: the schedule, its fire times and its runs load again.
  const [tick, setTick] = useState(0);
  const r = useResource(() => api.get<Schedule>(`/v1/schedules/${encodeURIComponent(id)}`), [id, tick], live);
  const s = r.data;
  return (
    <Layout title={s ? `Schedule ${s.job.type}` : 'Schedule'}>
      <p>
        <a href={paths.schedules}>All schedules</a> · <span class="mono">{id}</span>
      </p>
      <LiveToggle
        live={live !== undefined}
        onChange={(on) => q.set({ live: on ? '1' : '' })}
        seconds={LIVE_SECONDS}
        updatedAt={r.updatedAt}
      />
      <ErrorNote error={r.error} />
      {!s && !r.error && <p aria-busy="true">Loading…</p>}
      {s && (
        <>
          <div class="grid-cards" aria-busy={r.loading} aria-live="polite">
            <ScheduleRules s={s} />
            <ScheduleHealth s={s} />
          </div>
          <ScheduleActions s={s} onDone={() => setTick((t) => t + 1)} />
          <FireTimes s={s} q={q} tick={tick} />
          <ScheduleRuns id={s.id} q={q} tick={tick} live={live} />
        </>
      )}
    </Layout>
  );
}
