import { LifecycleService } from '@kairos/core';
import { Dispatcher, type DispatcherOptions } from './dispatcher.js';

/**
 * The classes of each dispatch lane: `critical` alone when other classes exist, the others
 * together (that lane also dispatches PostgreSQL-only partitions).
 */
export function laneClasses(classes: readonly string[]): string[][] {
  const others = classes.filter((c) => c !== 'critical');
  return others.length < classes.length && others.length > 0 ? [['critical'], others] : [[...classes]];
}

/** The critical lane's own safety net, in the other lane's safety-net intervals. */
const PEEKED_SAFETY_NET_FACTOR = 10;

/**
 * The dispatcher as lanes, each its own loop over the same partitions. A round claims and
 * produces everything it popped before popping again, and under a herd one round of the batch
 * classes is thousands of jobs and seconds long (mostly waiting on PostgreSQL and Kafka): a
 * critical job falling due meanwhile waited for its end. In a lane of its own it is popped and
 * dispatched meanwhile. Lanes share nothing but the partitions: each pops only its classes, and
 * every claim is checked by version and epoch as before, so two lanes never dispatch a job twice.
 */
export class DispatchLanes extends LifecycleService {
  readonly #lanes: readonly Dispatcher[];
  readonly #byClass = new Map<string, Dispatcher>();

  constructor(
    options: Omit<DispatcherOptions, 'name' | 'classes' | 'postgresOnly' | 'peek'>,
    classes: readonly string[],
  ) {
    super('dispatcher');
    const groups = laneClasses(classes);
    const [first, second] = groups;
    if (first && second) {
      // The critical lane's safety net is the other lane's: each of its pops peeks at critical's
      // earliest job and wakes the critical lane for it, so idle, a partition costs one pop per
      // safety-net interval, not one per lane.
      const critical = new Dispatcher({
        ...options,
        name: 'dispatcher (critical)',
        classes: new Set(first),
        postgresOnly: false,
        maxSleepMs: options.maxSleepMs * PEEKED_SAFETY_NET_FACTOR,
      });
      const rest = new Dispatcher({
        ...options,
        name: `dispatcher (${second.join(', ')})`,
        classes: new Set(second),
        peek: { classes: first, onDue: (partition, dueAtMs) => critical.scheduled(partition, dueAtMs) },
      });
      this.#lanes = [critical, rest];
    } else {
      this.#lanes = [new Dispatcher(options)];
    }
    groups.forEach((group, i) => {
      for (const c of group) this.#byClass.set(c, this.#lanes[i] as Dispatcher);
    });
  }

  /** A job of `resourceClass` due at `dueAtMs` (Redis time) entered the partition's hot set. */
  scheduled(partition: number, dueAtMs: number, resourceClass: string): void {
    // A class no lane releases is never popped: waking a lane for it would cost a pop for nothing.
    this.#byClass.get(resourceClass)?.scheduled(partition, dueAtMs);
  }

  /** See Dispatcher.refresh: every lane visits the partition (or every partition) now. */
  refresh(partition?: number): void {
    for (const lane of this.#lanes) lane.refresh(partition);
  }

  forget(partition: number): void {
    for (const lane of this.#lanes) lane.forget(partition);
  }

  protected async onStart(): Promise<void> {
    await Promise.all(this.#lanes.map((l) => l.start()));
  }

  protected async onStop(): Promise<void> {
    await Promise.all(this.#lanes.map((l) => l.stop()));
  }
}
