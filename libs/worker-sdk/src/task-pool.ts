import type { TaskDispatchRecord } from '@kairos/schemas';
import { SlotAccounts, type ClassSlots, type ReservedSlots, type SlotKind } from './slots.js';

/** A task taken from its partition. */
export interface Task {
  readonly dispatch: TaskDispatchRecord;
  /** The task message's W3C trace context (null: none, or malformed). */
  readonly traceparent: string | null;
  /** How many times workers without a handler for its type gave it back (0: never). */
  readonly returns: number;
  /** Its partition's state here: once revoked, a task not started yet is left to the next owner. */
  readonly source: { readonly revoked: boolean };
  readonly offset: string;
}

/** How a task ended here: 'done' (result durable, or nothing to run), or 'abandoned' (not run). */
export type TaskEnd = 'done' | 'abandoned';

/** What running a task came to: an end, or a wait before it is tried again here. */
export type RunOutcome = { readonly end: TaskEnd } | { readonly againInMs: number };

export interface TaskPoolOptions<T extends Task> {
  /** Handlers run at once. */
  readonly concurrency: number;
  /**
   * Slots of `concurrency` only a resource class may use (valid: checkReservedSlots); the rest
   * are shared. Default: none, every slot shared.
   */
  readonly reservedSlots?: ReservedSlots;
  /**
   * Runs a task. It calls `handlerDone` once its handler has returned: the slot goes to the next
   * task while this one publishes its result and releases its lease (it ends when it resolves).
   */
  readonly run: (task: T, handlerDone: () => void) => Promise<RunOutcome>;
  /** Every submitted task ends exactly once. */
  readonly onEnd: (task: T, end: TaskEnd) => void;
  /** The number of tasks held for their due time changed. */
  readonly onEarlyChange: () => void;
  readonly onError: (err: unknown, task: T) => void;
}

/** A task waiting for a slot; `seq` is its arrival order across classes. */
interface Queued<T> {
  readonly task: T;
  readonly seq: number;
}

interface Held {
  readonly timer: NodeJS.Timeout;
  readonly early: boolean;
}

/** Wait before a task whose run failed unexpectedly is tried again, ms. */
const FAILED_RUN_RETRY_MS = 1000;

/** Longest timer Node keeps (2^31 - 1 ms, ~24.8 days); a longer one would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const classOf = (task: Task): string => task.dispatch.resource_class;

/**
 * The handler pool: runs submitted tasks' handlers, at most `concurrency` at once and in arrival
 * order (a task whose handler returned gives its slot up while its result is being published),
 * never before their due time (a task that arrives early is held until then, outside the queue),
 * and holds a task that must wait (not admitted now, Redis unreachable) before trying it again.
 * With reserved slots, each class queues on its own: a class with a free reserved slot starts its
 * first task at once, whatever other classes have queued; shared slots go in arrival order.
 */
export class TaskPool<T extends Task = Task> {
  readonly #o: TaskPoolOptions<T>;
  readonly #slots: SlotAccounts;
  /** Tasks waiting for a slot, by resource class, each queue in arrival order. */
  readonly #queues = new Map<string, Queued<T>[]>();
  #queued = 0;
  #seq = 0;
  readonly #held = new Map<T, Held>();
  readonly #idle = new Set<() => void>();
  #early = 0;
  readonly #earlyOf = new Map<string, number>();
  /** Tasks whose handler returned, finishing without a slot (result, lease release). */
  #finishing = 0;
  #closed = false;

  constructor(options: TaskPoolOptions<T>) {
    this.#o = options;
    this.#slots = new SlotAccounts(options.concurrency, options.reservedSlots);
  }

  /** Tasks held for their due time. */
  get early(): number {
    return this.#early;
  }

  /** Tasks of a resource class held for their due time. */
  earlyOf(resourceClass: string): number {
    return this.#earlyOf.get(resourceClass) ?? 0;
  }

  /** Tasks holding a slot (their handler runs, or is about to). */
  get running(): number {
    return this.#slots.inUse;
  }

  /** Slots a resource class holds now, by kind. */
  slotsOf(resourceClass: string): ClassSlots {
    return this.#slots.of(resourceClass);
  }

  /** Takes a task: runs it once due and a slot is free. */
  submit(task: T): void {
    if (this.#closed || task.source.revoked) this.#o.onEnd(task, 'abandoned');
    else this.#whenDue(task);
  }

  /** Abandons the tasks not started yet whose partition was revoked (the next owner runs them). */
  purgeRevoked(): void {
    this.#abandonWaiting((t) => t.source.revoked);
  }

  /** Takes no more tasks and abandons those not started; running ones go on. */
  close(): void {
    this.#closed = true;
    this.#abandonWaiting(() => true);
  }

  /** Resolves once no task runs or finishes (none waits either, after close()). */
  whenIdle(): Promise<void> {
    if (this.#idleNow()) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.#idle.delete(done);
        resolve();
      };
      this.#idle.add(done);
    });
  }

  /** Holds a task until its due time has passed on this clock (timers may fire a little early). */
  #whenDue(task: T): void {
    const wait = task.dispatch.due_at - Date.now();
    if (wait <= 0) this.#enqueue(task);
    else this.#hold(task, wait, true);
  }

  #hold(task: T, ms: number, early: boolean): void {
    // A timer longer than 2^31 - 1 ms fires at once: a task due further out waits in steps.
    const timer = setTimeout(
      () => {
        this.#unhold(task);
        if (this.#closed || task.source.revoked) this.#end(task, 'abandoned');
        else if (early) this.#whenDue(task);
        else this.#enqueue(task);
      },
      Math.min(ms, MAX_TIMER_MS),
    );
    this.#held.set(task, { timer, early });
    if (early) this.#earlyChanged(task, +1);
  }

  #unhold(task: T): void {
    const held = this.#held.get(task);
    if (!held) return;
    clearTimeout(held.timer);
    this.#held.delete(task);
    if (held.early) this.#earlyChanged(task, -1);
  }

  #earlyChanged(task: T, by: number): void {
    this.#early += by;
    const rc = classOf(task);
    this.#earlyOf.set(rc, this.earlyOf(rc) + by);
    this.#o.onEarlyChange();
  }

  #abandonWaiting(which: (task: T) => boolean): void {
    for (const task of [...this.#held.keys()].filter(which)) {
      this.#unhold(task);
      this.#end(task, 'abandoned');
    }
    const drop: T[] = [];
    for (const [rc, queue] of this.#queues) {
      const keep = queue.filter((q) => !which(q.task));
      drop.push(...queue.filter((q) => which(q.task)).map((q) => q.task));
      this.#queues.set(rc, keep);
    }
    this.#queued -= drop.length;
    for (const task of drop) this.#end(task, 'abandoned');
  }

  #enqueue(task: T): void {
    const rc = classOf(task);
    const queue = this.#queues.get(rc) ?? [];
    queue.push({ task, seq: this.#seq++ });
    this.#queues.set(rc, queue);
    this.#queued++;
    this.#pump();
  }

  /** Starts what fits; tasks started in one go claim their leases together. */
  #pump(): void {
    for (let queue = this.#next(); queue; queue = this.#next()) {
      // Off its queue before it starts: a handler may return (and pump again) at once.
      const { task } = queue.shift() as Queued<T>;
      this.#queued--;
      this.#start(task, this.#slots.take(classOf(task)) as SlotKind);
    }
  }

  /**
   * The queue whose first task may start now, or undefined: first a class with a free reserved
   * slot (it never waits behind other classes), else the earliest queued task of all, if a shared
   * slot is free.
   */
  #next(): Queued<T>[] | undefined {
    let earliest: Queued<T>[] | undefined;
    for (const [rc, queue] of this.#queues) {
      const head = queue[0];
      if (!head) continue;
      if (this.#slots.reservedFree(rc)) return queue;
      if (!earliest || head.seq < (earliest[0]?.seq ?? Infinity)) earliest = queue;
    }
    return earliest && this.#slots.sharedFree ? earliest : undefined;
  }

  #start(task: T, slot: SlotKind): void {
    let holdsSlot = true;
    const release = () => {
      holdsSlot = false;
      this.#slots.release(classOf(task), slot);
    };
    const handlerDone = () => {
      if (!holdsSlot) return;
      release();
      this.#finishing++;
      this.#pump();
    };
    void this.#o
      .run(task, handlerDone)
      .catch((err: unknown): RunOutcome => {
        this.#o.onError(err, task);
        return { againInMs: FAILED_RUN_RETRY_MS };
      })
      .then((outcome) => {
        if (holdsSlot) release();
        else this.#finishing--;
        if (!('againInMs' in outcome)) this.#end(task, outcome.end);
        else if (this.#closed || task.source.revoked) this.#end(task, 'abandoned');
        else this.#hold(task, outcome.againInMs, false);
        this.#pump();
      });
  }

  #idleNow(): boolean {
    return this.#slots.inUse + this.#finishing + this.#queued + this.#held.size === 0;
  }

  #end(task: T, end: TaskEnd): void {
    this.#o.onEnd(task, end);
    if (this.#idleNow()) for (const done of this.#idle) done();
  }
}
