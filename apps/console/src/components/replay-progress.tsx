import type { Replay } from '../api/types.js';

/** How far a replay is: a <progress> of replayed/selected and the same in words. */
export function ReplayProgress({ replay, label }: { replay: Replay; label: string }) {
  const pct = replay.selected === 0 ? 100 : Math.floor((replay.replayed / replay.selected) * 100);
  return (
    <span class="replay-progress">
      <progress value={replay.replayed} max={Math.max(replay.selected, 1)} aria-label={label} />
      <span>
        {replay.replayed} of {replay.selected} replayed ({pct} %)
      </span>
    </span>
  );
}
