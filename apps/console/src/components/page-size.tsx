/** How many rows a page holds: a choice of `sizes`, told to the page on change. */
export function PageSize(p: {
  readonly value: string;
  readonly sizes: readonly string[];
  readonly onChange: (size: string) => void;
}) {
  const sizes = p.sizes.includes(p.value) ? p.sizes : [...p.sizes, p.value];
  return (
    <label for="page-size" class="page-size">
      Per page
      <select id="page-size" name="limit" value={p.value} onChange={(e) => p.onChange(e.currentTarget.value)}>
        {sizes.map((s) => (
          <option key={s} value={s}>
            {s}
          </option>
        ))}
      </select>
    </label>
  );
}
