import type { Schedule } from '../api/types.js';
import { Facts } from './facts.js';
import { StateBadge } from './state-badge.js';
import { duration, Time } from './time.js';
import { ZoneTime } from './zone-time.js';

const misfireText = (m: Schedule['misfire']) => {
  if (!m) return 'fire_latest (default)';
  const extra = [m.max_count && `max ${m.max_count}`, m.window_ms && `window ${duration(m.window_ms)}`];
  const parts = extra.filter(Boolean);
  return parts.length > 0 ? `${m.kind} (${parts.join(', ')})` : m.kind;
};

/** The schedule's rules and where it stands. */
export function ScheduleRules({ s }: { s: Schedule }) {
  return (
    <section aria-labelledby="rules">
      <h2 id="rules">Rules and state</h2>
      <Facts
        rows={[
          ['State', <StateBadge state={s.state} />],
          ['Cron', <code>{s.cron}</code>],
          ['Time zone', s.time_zone],
          ['Job', `${s.job.type} on class ${s.job.resource_class ?? '—'}`],
          ['Next fire', s.next_fire ? <ZoneTime local={s.next_fire.local} /> : 'none (not active)'],
          ['DST', `gap ${s.dst?.gap ?? 'shift'}, overlap ${s.dst?.overlap ?? 'first'}`],
          ['Misfire', `${misfireText(s.misfire)}; tolerance ${duration(s.misfire_tolerance_ms)}`],
          ['Overlap', s.overlap ?? 'allow'],
          ['Jitter', s.jitter_ms ? `±${duration(s.jitter_ms)}` : 'none'],
          ['Starts', <Time at={s.start_at} />],
          ['Ends', <Time at={s.end_at} />],
          ['Version', String(s.version)],
          ['Created', <Time at={s.created_at} />],
          ['Paused', <Time at={s.paused_at} />],
        ]}
      />
    </section>
  );
}

/** The dead-man's switch: is the schedule succeeding within its SLA, and what its runs missed. */
export function ScheduleHealth({ s }: { s: Schedule }) {
  return (
    <section aria-labelledby="health">
      <h2 id="health">Health and misfires</h2>
      <Facts
        rows={[
          ['Health', <StateBadge state={s.health} />],
          ['SLA', s.sla_ms == null ? 'none' : `succeed within ${duration(s.sla_ms)} of the fire time`],
          ['Last success', <Time at={s.last_success_at} />],
          ['Late runs', String(s.late_runs)],
          ['Misfires', `${s.misfires} (${s.misfires_skipped} never got a run)`],
          ['Skips', `${s.skips} (overlap policy or paused)`],
        ]}
      />
    </section>
  );
}
