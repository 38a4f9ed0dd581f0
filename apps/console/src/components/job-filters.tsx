import { useEffect, useState } from 'preact/hooks';
import { JOB_STATES } from '../api/types.js';
import { fromLocalInput, toLocalInput } from './time.js';

/** The job search's filters as the API names them (`GET /v1/jobs`, `GET /v1/dead-letters`). */
export type Filters = Record<string, string>;

const FAILURE_CLASSES = ['transient', 'throttled', 'permanent', 'ambiguous'] as const;

interface Field {
  readonly name: string;
  readonly label: string;
  readonly kind: 'text' | 'datetime' | 'state' | 'failure';
  readonly hint?: string;
}

const FIELDS: readonly Field[] = [
  { name: 'state', label: 'State', kind: 'state' },
  { name: 'type', label: 'Type', kind: 'text', hint: 'comma-separated for any of several' },
  { name: 'resource_class', label: 'Resource class', kind: 'text', hint: 'comma-separated' },
  { name: 'schedule_id', label: 'Schedule id', kind: 'text' },
  { name: 'failure_class', label: 'Failure class', kind: 'failure' },
  { name: 'error', label: 'Error contains', kind: 'text' },
  { name: 'due_after', label: 'Due after', kind: 'datetime' },
  { name: 'due_before', label: 'Due before', kind: 'datetime' },
  { name: 'created_after', label: 'Created after', kind: 'datetime' },
  { name: 'created_before', label: 'Created before', kind: 'datetime' },
  { name: 'finished_after', label: 'Finished after', kind: 'datetime' },
  { name: 'finished_before', label: 'Finished before', kind: 'datetime' },
];

interface InputProps {
  readonly f: Field;
  readonly value: string;
  readonly set: (v: string) => void;
  /** The API named this filter in its 400 answer. */
  readonly invalid: boolean;
}

function Input({ f, value, set, invalid }: InputProps) {
  const id = `filter-${f.name}`;
  const bad = invalid ? true : undefined;
  const options = f.kind === 'state' ? JOB_STATES : f.kind === 'failure' ? FAILURE_CLASSES : undefined;
  return (
    <label for={id}>
      {f.label}
      {options ? (
        <select
          id={id}
          name={f.name}
          aria-invalid={bad}
          value={value}
          onChange={(e) => set(e.currentTarget.value)}
        >
          <option value="">any</option>
          {options.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      ) : f.kind === 'datetime' ? (
        <input
          id={id}
          name={f.name}
          aria-invalid={bad}
          type="datetime-local"
          step={1}
          value={value ? toLocalInput(value) : ''}
          onInput={(e) => set(fromLocalInput(e.currentTarget.value))}
        />
      ) : (
        <input
          id={id}
          name={f.name}
          aria-invalid={bad}
          value={value}
          placeholder={f.hint}
          onInput={(e) => set(e.currentTarget.value)}
        />
      )}
    </label>
  );
}

/**
 * Every filter of the job search in one form (the API validates; its field errors are shown by
 * the page). `omit` leaves filters out (the dead-letter list has no state). Applied on submit.
 */
export function JobFilters(p: {
  readonly value: Filters;
  readonly onApply: (f: Filters) => void;
  readonly omit?: readonly string[];
  /** Filters the API refused (the field names of its 400 answer), marked aria-invalid. */
  readonly invalid?: readonly string[];
}) {
  const [draft, setDraft] = useState<Filters>(p.value);
  useEffect(() => setDraft(p.value), [p.value]);
  const fields = FIELDS.filter((f) => !p.omit?.includes(f.name));
  const clean = (f: Filters) => Object.fromEntries(Object.entries(f).filter(([, v]) => v.trim() !== ''));
  return (
    <form
      class="filters"
      role="search"
      aria-label="Filters"
      onSubmit={(e) => {
        e.preventDefault();
        p.onApply(clean(draft));
      }}
    >
      <div class="filter-grid">
        {fields.map((f) => (
          <Input
            key={f.name}
            f={f}
            value={draft[f.name] ?? ''}
            invalid={p.invalid?.includes(f.name) ?? false}
            set={(v) => setDraft({ ...draft, [f.name]: v })}
          />
        ))}
      </div>
      <div class="actions">
        <button type="submit">Search</button>
        <button type="button" class="secondary outline" onClick={() => p.onApply({})}>
          Clear
        </button>
      </div>
    </form>
  );
}
