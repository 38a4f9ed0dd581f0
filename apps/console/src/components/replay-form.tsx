import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api } from '../api/client.js';
import { useMounted } from '../hooks/use-mounted.js';
import type { Replay, ReplayPreview as Preview } from '../api/types.js';
import { paths } from '../paths.js';
import { Confirm } from './confirm.js';
import { ErrorNote } from './error-note.js';
import type { Filters } from './job-filters.js';
import { count, ReplayPreview } from './replay-preview.js';
import { duration } from './time.js';

const DEFAULT_RATE = '10';

/** The rate as the API takes it (empty: the default); a bad one is the API's to name. */
const rateOf = (s: string): number => Number(s.trim() === '' ? DEFAULT_RATE : s);

/** The confirmation (how many, at what rate), then the replay itself and on to its page. */
function StartReplay({ filter, rate, n }: { filter: Filters; rate: string; n: number }) {
  const { route } = useLocation();
  const perSec = Number(rate) || Number(DEFAULT_RATE);
  const start = async () => {
    const r = await api.post<Replay>('/v1/dead-letters:replay', {
      filter,
      dry_run: false,
      rate_per_sec: rateOf(rate),
    });
    route(paths.replay(r.id));
  };
  return (
    <Confirm label={`Replay ${count(n)}`} title={`Replay ${count(n)}?`} confirm="Replay" action={start}>
      <p>
        {n} job{n === 1 ? '' : 's'} will be re-created as new jobs (a fresh attempt budget, due now) at{' '}
        {perSec} per second, taking about {duration((n / perSec) * 1000)}. The dead letters are selected again
        when you confirm: any that arrived since the dry run are included.
      </p>
    </Confirm>
  );
}

/**
 * "Replay these": the dead letters the page's filter selects, sent back as new jobs. A dry run
 * comes first (nothing changes) and shows what would go; only then does a confirmation start the
 * replay, at the chosen rate, and the page moves to the replay's progress. The page keys this on
 * its filter, so a changed filter drops an old preview.
 */
export function ReplayForm({ filter }: { filter: Filters }) {
  const [rate, setRate] = useState(DEFAULT_RATE);
  const [preview, setPreview] = useState<Preview>();
  const [error, setError] = useState<Error>();
  const [busy, setBusy] = useState(false);
  // The page remounts this form when its filter changes: an old dry run's answer is then dropped.
  const mounted = useMounted();

  const dryRun = async () => {
    setBusy(true);
    setError(undefined);
    setPreview(undefined);
    try {
      const got = await api.post<Preview>('/v1/dead-letters:replay', {
        filter,
        dry_run: true,
        rate_per_sec: rateOf(rate),
      });
      if (mounted()) setPreview(got);
    } catch (e) {
      if (mounted()) setError(e instanceof Error ? e : new Error(String(e)));
    } finally {
      if (mounted()) setBusy(false);
    }
  };
  const n = preview?.total ?? 0;
  return (
    <form
      class="replay-form"
      aria-label="Replay these dead letters"
      onSubmit={(e) => {
        e.preventDefault();
        void dryRun();
      }}
    >
      <p>
        Sends the dead letters that match the filter above back through Kairos as new jobs (the originals stay
        FAILED). A dry run first shows what would be sent; nothing changes until you confirm.
      </p>
      <label for="replay-rate">
        Rate (jobs per second, 1–1,000)
        <input
          id="replay-rate"
          name="rate_per_sec"
          type="number"
          inputMode="numeric"
          value={rate}
          onInput={(e) => {
            setRate(e.currentTarget.value);
            setPreview(undefined);
          }}
        />
      </label>
      <div class="actions">
        <button type="submit" aria-busy={busy} disabled={busy}>
          Dry run
        </button>
        {preview && n > 0 && <StartReplay filter={filter} rate={rate} n={n} />}
      </div>
      <ErrorNote error={error} />
      {preview && <ReplayPreview preview={preview} />}
      {preview && n === 0 && <p>Nothing to replay: no dead letter matches.</p>}
    </form>
  );
}
