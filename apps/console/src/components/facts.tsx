import type { ComponentChildren } from 'preact';

/** One term and its value; the <div> around each pair is what the `.facts` grid lays out. */
export function Fact({ term, children }: { term: string; children: ComponentChildren }) {
  return (
    <div>
      <dt>{term}</dt>
      <dd>{children}</dd>
    </div>
  );
}

/** A definition list of `[term, value]` rows, for pages that list them as data. */
export function Facts({ rows }: { rows: readonly (readonly [string, ComponentChildren])[] }) {
  return (
    <dl class="facts">
      {rows.map(([k, v]) => (
        <Fact key={k} term={k}>
          {v}
        </Fact>
      ))}
    </dl>
  );
}
