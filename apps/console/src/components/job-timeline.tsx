import { TERMINAL_STATES, type Job } from '../api/types.js';
import { span, Time } from './time.js';

interface Step {
  readonly name: string;
  readonly at: string | null;
  /** The hop from the step before: its name (as the README's per-hop metrics) and length. */
  readonly hop?: { readonly name: string; readonly from: string | null };
}

function steps(j: Job): Step[] {
  return [
    { name: 'Created', at: j.created_at },
    { name: 'Due', at: j.due_at, hop: { name: 'wait (created → due)', from: j.created_at } },
    {
      name: 'Dispatched',
      at: j.dispatched_at,
      hop: { name: 'dispatch lag (due → dispatched)', from: j.due_at },
    },
    { name: 'Started', at: j.started_at, hop: { name: 'dispatched → started', from: j.dispatched_at } },
    {
      name: `Finished${TERMINAL_STATES.has(j.state) ? ` (${j.state})` : ''}`,
      at: j.finished_at,
      hop: { name: 'run (started → finished)', from: j.started_at },
    },
  ];
}

/** Created before its due time: the wait is how long it was held, never negative. */
function hopText(step: Step): string {
  if (!step.hop) return '';
  if (step.name === 'Due' && step.at && step.hop.from && step.at < step.hop.from) return 'due when created';
  return span(step.hop.from, step.at);
}

/**
 * The job's way from creation to its end, each step's time and the lag of each hop; dispatch
 * and later are the latest attempt's (a retry starts them over; every attempt is in its table).
 */
export function JobTimeline({ job }: { job: Job }) {
  const ended = TERMINAL_STATES.has(job.state);
  return (
    <ol class="timeline">
      {steps(job).map((s) => (
        <li key={s.name} class={s.at ? 'done' : 'pending'}>
          <strong>{s.name}</strong>{' '}
          {s.at ? <Time at={s.at} /> : <span class="muted">{ended ? 'never' : 'not yet'}</span>}
          {s.hop && (
            <small class="hop">
              {s.hop.name}: <span class="mono">{hopText(s)}</span>
            </small>
          )}
        </li>
      ))}
    </ol>
  );
}
