import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api } from '../api/client.js';
import type { BackfillAnswer, Job, Schedule } from '../api/types.js';
import { paths } from '../paths.js';
import { Confirm } from './confirm.js';
import { fromLocalInput, Time } from './time.js';

/** Each action reports what the API answered (shown under the buttons) and the page reloads. */
type Report = (outcome: ComponentChildren) => void;
const base = (s: Schedule) => `/v1/schedules/${encodeURIComponent(s.id)}`;

function PauseResume({ s, report }: { s: Schedule; report: Report }) {
  const [catchUp, setCatchUp] = useState(false);
  if (s.state === 'ACTIVE')
    return (
      <Confirm
        label="Pause"
        title="Pause this schedule?"
        confirm="Pause schedule"
        action={async () => {
          await api.post<Schedule>(`${base(s)}/pause`);
          report('Paused: no regular run is dispatched until it is resumed.');
        }}
      >
        <p>
          Its runs not dispatched yet are cancelled; runs already dispatched finish. Trigger and backfill
          still run.
        </p>
      </Confirm>
    );
  if (s.state !== 'PAUSED') return null;
  return (
    <Confirm
      label="Resume"
      title="Resume this schedule?"
      confirm="Resume schedule"
      action={async () => {
        await api.post<Schedule>(`${base(s)}/resume`, { catch_up: catchUp });
        report(catchUp ? 'Resumed; what came due while paused goes to the misfire policy.' : 'Resumed.');
      }}
    >
      <p>It continues with its next occurrence after now.</p>
      <label for="resume-catch-up">
        <input
          id="resume-catch-up"
          type="checkbox"
          checked={catchUp}
          onChange={(e) => setCatchUp(e.currentTarget.checked)}
        />
        Catch up: treat what came due while paused as missed (the misfire policy decides what runs)
      </label>
    </Confirm>
  );
}

function Trigger({ s, report }: { s: Schedule; report: Report }) {
  const [key, setKey] = useState('');
  return (
    <Confirm
      label="Trigger now"
      title="Run this schedule once now?"
      confirm="Trigger run"
      disabled={s.state === 'DELETED'}
      action={async () => {
        const job = await api.post<Job>(
          `${base(s)}/trigger`,
          key.trim() ? { idempotency_key: key.trim() } : {},
        );
        report(
          <>
            Run created: <a href={paths.job(job.id)}>{job.id}</a> ({job.state})
          </>,
        );
      }}
    >
      <p>One extra run with its own occurrence id; the regular occurrences are unaffected.</p>
      <label for="trigger-key">
        Idempotency key (optional: the same key creates the run once)
        <input id="trigger-key" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
      </label>
    </Confirm>
  );
}

function BackfillAnswerNote({ a }: { a: BackfillAnswer }) {
  return (
    <>
      Backfill: {a.requested} requested, {a.created} created, {a.already_backfilled} already backfilled, at{' '}
      {a.rate_per_sec} per second
      {a.first_due_at && (
        <>
          ; due from <Time at={a.first_due_at} /> to <Time at={a.last_due_at} />
        </>
      )}
      .
    </>
  );
}

function Backfill({ s, report }: { s: Schedule; report: Report }) {
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [max, setMax] = useState('');
  const input = (
    id: string,
    label: string,
    value: string,
    set: (v: string) => void,
    type: 'datetime-local' | 'number',
  ) => (
    <label for={id}>
      {label}
      <input id={id} type={type} step={1} value={value} onInput={(e) => set(e.currentTarget.value)} />
    </label>
  );
  return (
    <Confirm
      label="Backfill"
      title="Run the occurrences of a past range?"
      confirm="Backfill range"
      disabled={s.state === 'DELETED'}
      action={async () => {
        const body = {
          from: fromLocalInput(from),
          to: fromLocalInput(to),
          ...(max ? { max_count: Number(max) } : {}),
        };
        report(<BackfillAnswerNote a={await api.post<BackfillAnswer>(`${base(s)}/backfill`, body)} />);
      }}
    >
      <p>
        Each occurrence of the cron in [from, to) runs once as a backfill run (asking again runs nothing
        twice), at the API's backfill rate. Times are your time zone.
      </p>
      {input('backfill-from', 'From (inclusive)', from, setFrom, 'datetime-local')}
      {input('backfill-to', 'To (exclusive, not in the future)', to, setTo, 'datetime-local')}
      {input('backfill-max', 'At most (occurrences; optional)', max, setMax, 'number')}
    </Confirm>
  );
}

/** Pause or resume, trigger and backfill, each confirmed first; the answer is shown after. */
export function ScheduleActions({ s, onDone }: { s: Schedule; onDone: () => void }) {
  const [outcome, setOutcome] = useState<ComponentChildren>(null);
  const report: Report = (o) => {
    setOutcome(o);
    onDone();
  };
  return (
    <section aria-labelledby="actions">
      <h2 id="actions">Actions</h2>
      <div class="actions">
        <PauseResume s={s} report={report} />
        <Trigger s={s} report={report} />
        <Backfill s={s} report={report} />
      </div>
      <p role="status" class="outcome">
        {outcome}
      </p>
    </section>
  );
}
