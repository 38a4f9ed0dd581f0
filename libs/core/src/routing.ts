import { shardOf } from './murmur2.js';

/** A worker instance as the dispatcher's routing sees it (from its heartbeat on kairos.workers). */
export interface RoutedWorker {
  readonly service: string;
  /** It reads its service's own topics (`kairos.tasks.<class>.<service>`), not the class topic. */
  readonly serviceTopics: boolean;
  readonly resourceClasses: readonly string[];
  readonly jobTypes: readonly string[];
}

/**
 * Where a task goes: the topic of a service that handles its type, the class topic (read by
 * workers without service topics), or the class's waiting topic when no live worker handles it.
 */
export type Route =
  | { readonly kind: 'service'; readonly service: string }
  | { readonly kind: 'class' }
  | { readonly kind: 'waiting' };

const CLASS: Route = { kind: 'class' };
const WAITING: Route = { kind: 'waiting' };

/**
 * The routing of one moment's live workers: per class and job type, the services with topics of
 * their own that handle it, and whether a class-topic worker does. Built once per change of the
 * registry; a route is one map lookup (and a hash when several services share a type), so the
 * work per task does not grow with the number of services.
 */
export class RoutingTable {
  readonly #services = new Map<string, readonly string[]>();
  readonly #onClassTopic = new Set<string>();

  constructor(live: readonly RoutedWorker[]) {
    const services = new Map<string, Set<string>>();
    for (const w of live) {
      for (const rc of w.resourceClasses) {
        for (const type of w.jobTypes) {
          const key = `${rc}\u0000${type}`;
          if (!w.serviceTopics) this.#onClassTopic.add(key);
          else services.set(key, (services.get(key) ?? new Set()).add(w.service));
        }
      }
    }
    for (const [key, set] of services) this.#services.set(key, [...set].sort());
  }

  /** Where a task of this class and type goes; several services: chosen by the job id, stably. */
  route(resourceClass: string, jobType: string, jobId: string): Route {
    const key = `${resourceClass}\u0000${jobType}`;
    const services = this.#services.get(key);
    if (services && services.length > 0) {
      const service = services.length === 1 ? services[0] : services[shardOf(jobId, services.length)];
      if (service !== undefined) return { kind: 'service', service };
    }
    return this.#onClassTopic.has(key) ? CLASS : WAITING;
  }
}
