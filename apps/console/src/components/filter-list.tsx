/** A search filter as `name: value` pairs (a replay's, or the page's); none means every one. */
export function FilterList({ filter }: { filter: Record<string, unknown> }) {
  const entries = Object.entries(filter);
  if (entries.length === 0) return <p>Every dead letter (no filter).</p>;
  return (
    <dl class="filter-list">
      {entries.map(([k, v]) => (
        <div key={k}>
          <dt>{k}</dt>
          <dd class="mono">{typeof v === 'string' ? v : JSON.stringify(v)}</dd>
        </div>
      ))}
    </dl>
  );
}
