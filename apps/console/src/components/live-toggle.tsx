import { clock } from './time.js';

/**
 * A switch for live refresh (every `seconds` while the tab is visible) and, announced politely,
 * when the data shown last arrived.
 */
export function LiveToggle(p: {
  readonly live: boolean;
  readonly onChange: (live: boolean) => void;
  readonly seconds: number;
  readonly updatedAt: number | undefined;
}) {
  return (
    <div class="live">
      <label for="live">
        <input
          id="live"
          name="live"
          type="checkbox"
          role="switch"
          checked={p.live}
          onChange={(e) => p.onChange(e.currentTarget.checked)}
        />
        Live (every {p.seconds} s)
      </label>
      <UpdatedNote updatedAt={p.updatedAt} />
    </div>
  );
}

/** "updated hh:mm:ss", in a polite live region so a screen reader hears each refresh. */
export function UpdatedNote({ updatedAt }: { updatedAt: number | undefined }) {
  return (
    <small class="muted" aria-live="polite">
      {updatedAt === undefined ? '' : `updated ${clock(updatedAt)}`}
    </small>
  );
}
