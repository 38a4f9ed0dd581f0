import type { ReservedSlots } from './slots.js';

/** Resource classes whose taken tasks count against one budget; their topics pause together. */
export interface BufferBudget {
  readonly classes: readonly string[];
  /** Taken tasks (not held for their due time) at which these classes' topics pause. */
  readonly max: number;
}

/**
 * Splits `maxBufferedTasks` like the slots: each class with reserved slots has a budget of its
 * own, in proportion to them; the other classes share one, in proportion to the shared slots. A
 * flood of one class then pauses only its own topics, never those of a class with reserved slots
 * (which would otherwise not even be fetched until the flood's buffer had drained). Without
 * reservations: one budget of `maxBufferedTasks` for every class, as before.
 */
export function bufferBudgets(
  classes: readonly string[],
  reserved: ReservedSlots,
  concurrency: number,
  maxBufferedTasks: number,
): BufferBudget[] {
  const own = classes.filter((rc) => (reserved[rc] ?? 0) > 0);
  const rest = classes.filter((rc) => !own.includes(rc));
  const share = (slots: number) => Math.max(1, Math.floor((maxBufferedTasks * slots) / concurrency));
  const shared = concurrency - own.reduce((n, rc) => n + (reserved[rc] ?? 0), 0);
  return [
    ...own.map((rc) => ({ classes: [rc], max: share(reserved[rc] ?? 0) })),
    ...(rest.length > 0 ? [{ classes: rest, max: own.length > 0 ? share(shared) : maxBufferedTasks }] : []),
  ];
}
