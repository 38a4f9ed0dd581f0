import type { ComponentChildren } from 'preact';

/**
 * A table that scrolls sideways on a narrow screen instead of squeezing its columns: a labelled
 * region that takes keyboard focus, so it can be scrolled without a mouse.
 */
export function TableWrap({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    <div class="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
