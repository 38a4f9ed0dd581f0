/** A job, schedule or replay state as a labelled badge (colour is never the only signal). */
export function StateBadge({ state }: { state: string }) {
  return <span class={`badge badge-${state.toLowerCase()}`}>{state}</span>;
}
