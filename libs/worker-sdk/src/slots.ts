/** Which of a pool's slots a task holds: one reserved for its class, or a shared one. */
export type SlotKind = 'reserved' | 'shared';

/** Slots reserved per resource class (classes not named have none). */
export type ReservedSlots = Readonly<Record<string, number>>;

/** Slots a class holds now, by kind. */
export interface ClassSlots {
  readonly reserved: number;
  readonly shared: number;
}

/**
 * The handler slots of one pool: `concurrency` in all, of which each class named in `reserved`
 * has that many of its own (no other class may use them), and the rest are shared by every class.
 * A class takes its reserved slots first, then shared ones. Pure bookkeeping: no queue, no I/O.
 */
export class SlotAccounts {
  readonly #reserved: ReadonlyMap<string, number>;
  readonly #shared: number;
  readonly #held = new Map<string, { reserved: number; shared: number }>();
  #sharedHeld = 0;
  #total = 0;

  /** `reserved` must already be valid (checkReservedSlots): its total is below `concurrency`. */
  constructor(concurrency: number, reserved: ReservedSlots = {}) {
    this.#reserved = new Map(Object.entries(reserved).filter(([, n]) => n > 0));
    this.#shared = concurrency - [...this.#reserved.values()].reduce((a, b) => a + b, 0);
  }

  /** Classes that have reserved slots. */
  get reservedClasses(): Iterable<string> {
    return this.#reserved.keys();
  }

  /** Slots held now, all classes. */
  get inUse(): number {
    return this.#total;
  }

  /** Whether a task of this class can start now on a slot reserved for its class. */
  reservedFree(rc: string): boolean {
    return (this.#held.get(rc)?.reserved ?? 0) < (this.#reserved.get(rc) ?? 0);
  }

  /** Whether a shared slot is free. */
  get sharedFree(): boolean {
    return this.#sharedHeld < this.#shared;
  }

  /** Takes a slot for a task of this class (its reserved one first); undefined if none is free. */
  take(rc: string): SlotKind | undefined {
    const kind = this.reservedFree(rc) ? 'reserved' : this.sharedFree ? 'shared' : undefined;
    if (kind === undefined) return undefined;
    const held = this.#held.get(rc) ?? { reserved: 0, shared: 0 };
    held[kind]++;
    this.#held.set(rc, held);
    if (kind === 'shared') this.#sharedHeld++;
    this.#total++;
    return kind;
  }

  /** Gives back a slot taken by take(rc). */
  release(rc: string, kind: SlotKind): void {
    const held = this.#held.get(rc);
    if (!held || held[kind] === 0) throw new Error(`no ${kind} slot of ${rc} is held`);
    held[kind]--;
    if (kind === 'shared') this.#sharedHeld--;
    this.#total--;
  }

  /** Slots this class holds now, by kind. */
  of(rc: string): ClassSlots {
    const held = this.#held.get(rc);
    return { reserved: held?.reserved ?? 0, shared: held?.shared ?? 0 };
  }
}

/**
 * Validates the `reservedSlots` option: each class one the worker serves, each count a
 * non-negative integer, and their total below `concurrency` so at least one slot stays shared
 * (a class without a reservation must still run, and so must its canaries).
 */
export function checkReservedSlots(
  value: unknown,
  classes: readonly string[],
  concurrency: number,
): ReservedSlots {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new RangeError(
      `reservedSlots must be an object of slots by resource class, got ${JSON.stringify(value)}`,
    );
  let total = 0;
  for (const [rc, n] of Object.entries(value)) {
    if (!classes.includes(rc)) {
      throw new RangeError(
        `reservedSlots names resource class "${rc}", which this worker does not serve (${classes.join(', ')})`,
      );
    }
    if (typeof n !== 'number' || !Number.isInteger(n) || n < 0)
      throw new RangeError(`reservedSlots.${rc} must be a non-negative integer, got ${String(n)}`);
    total += n;
  }
  if (total >= concurrency) {
    throw new RangeError(
      `reservedSlots must total less than concurrency (${concurrency}) so a slot stays shared, got ${total}`,
    );
  }
  return { ...(value as ReservedSlots) };
}

/**
 * Reads reserved slots written as `class:count[,class:count…]` (e.g. `critical:6`, an
 * environment variable's form); `name` is what an error calls the input. An empty text reserves
 * nothing. The result is checked against the worker's classes and concurrency by the Worker.
 */
export function parseReservedSlots(text: string, name = 'reservedSlots'): ReservedSlots {
  const out = new Map<string, number>();
  for (const part of text.split(',').map((s) => s.trim())) {
    if (part === '') continue;
    const m = /^([^:\s]+)\s*:\s*(\d+)$/.exec(part);
    if (!m?.[1] || m[2] === undefined)
      throw new RangeError(`${name}: "${part}" is not class:count (e.g. critical:6)`);
    if (out.has(m[1])) throw new RangeError(`${name}: resource class "${m[1]}" appears twice`);
    out.set(m[1], Number(m[2]));
  }
  return Object.fromEntries(out);
}
