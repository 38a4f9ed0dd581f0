/** A table's column headings, each `<th scope="col">`; those in `numeric` right-aligned like their cells. */
export function TableHead({
  columns,
  numeric = [],
}: {
  columns: readonly string[];
  numeric?: readonly string[];
}) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th key={c} scope="col" class={numeric.includes(c) ? 'num' : undefined}>
            {c}
          </th>
        ))}
      </tr>
    </thead>
  );
}
