/**
 * A tiny typed notification hub: a component built early tells components built after it that
 * something happened, without holding them. The composition subscribes the listeners once every
 * component exists, so each is built complete, in dependency order.
 */
export class Notifications<E extends Record<string, unknown[]>> {
  readonly #listeners: { [K in keyof E]?: ((...args: E[K]) => void)[] } = {};

  on<K extends keyof E>(name: K, listener: (...args: E[K]) => void): void {
    (this.#listeners[name] ??= []).push(listener);
  }

  emit<K extends keyof E>(name: K, ...args: E[K]): void {
    for (const listener of this.#listeners[name] ?? []) listener(...args);
  }
}

/** What the partitions' owner and modes announce to the loops built on them. */
export type PartitionNotices = {
  /** The partition's hot set is whole (epoch taken, or rebuilt after Redis lost it). */
  ready: [partition: number];
  /** The partition is not ours any more: forget what is kept for it. */
  revoked: [partition: number];
  /** The partition entered (true) or left (false) PostgreSQL-only mode. */
  modeChanged: [partition: number, fallback: boolean];
};
