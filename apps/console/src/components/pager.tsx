/**
 * First, Previous and Next for a list paged by cursor (see cursor-trail.ts); the page number is
 * announced politely so a screen reader hears where Next led.
 */
export function Pager(p: {
  readonly page: number;
  readonly hasNext: boolean;
  readonly onFirst: () => void;
  readonly onPrevious: () => void;
  readonly onNext: () => void;
  /** The first page's button (default Newest; lists in creation order start with the oldest). */
  readonly firstLabel?: string;
}) {
  return (
    <nav aria-label="Pages" class="actions pager">
      <button type="button" class="outline" disabled={p.page === 0} onClick={p.onFirst}>
        {p.firstLabel ?? 'Newest'}
      </button>
      <button type="button" class="outline" disabled={p.page === 0} onClick={p.onPrevious}>
        Previous page
      </button>
      <span aria-live="polite">Page {p.page + 1}</span>
      <button type="button" class="outline" disabled={!p.hasNext} onClick={p.onNext}>
        Next page
      </button>
    </nav>
  );
}
