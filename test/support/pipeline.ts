import type { HotRecord } from '@kairos/delay-tier';
import { InProcessPipeline, type HarnessOptions } from '@kairos/ops';
import { inject } from 'vitest';
import type { Namespace } from './namespace.js';

export const RESOURCE_CLASSES = ['critical', 'default', 'io'];

export interface Pipeline extends Pick<
  InProcessPipeline,
  | 'pool'
  | 'codec'
  | 'topics'
  | 'commands'
  | 'schedules'
  | 'apiUrl'
  | 'apiKey'
  | 'api'
  | 'delayTier'
  | 'tracker'
  | 'worker'
  | 'newDelayTier'
  | 'newTracker'
> {
  readonly ns: Namespace;
  readonly dispatched: { record: HotRecord; atMs: number }[];
}

/**
 * The whole pipeline (API, outbox connector, delay tier, tracker) in this process, inside the
 * test's namespace; stopped on cleanup. Component logs go to the test output at
 * KAIROS_TEST_LOG level (default warn).
 */
export async function startPipeline(
  ns: Namespace,
  options: {
    /** Delay-tier options beyond the defaults (window, pre-dispatch, weights, probe times, ...). */
    readonly delayTier?: HarnessOptions['delayTier'];
    /** Services to use instead of the namespace's (e.g. a dedicated Redis). */
    readonly services?: Partial<HarnessOptions['services']>;
    /** Recurring schedules' settings (misfire tolerance, generation, backfill). */
    readonly schedules?: HarnessOptions['schedules'];
    /** The tracker's schedule generator (interval, lookahead…). */
    readonly generator?: HarnessOptions['generator'];
    /** The tracker's canary (interval, stall time, notifier). */
    readonly canary?: HarnessOptions['canary'];
    /** The tracker's reconciliation watchdog (interval, grace, timeouts). */
    readonly watchdog?: HarnessOptions['watchdog'];
    /** The tracker's job gauges and forecast (interval). */
    readonly gauges?: HarnessOptions['gauges'];
    /** The tracker follows the outbox connector's heartbeats (outbox lag). */
    readonly outboxHeartbeat?: HarnessOptions['outboxHeartbeat'];
    /** The tracker's SLA check of schedules (interval, notifier). */
    readonly scheduleSla?: HarnessOptions['scheduleSla'];
    /** Job events also sent straight after commit (default true); false: Debezium alone carries them. */
    readonly outboxRelay?: boolean;
  } = {},
): Promise<Pipeline> {
  const dispatched: Pipeline['dispatched'] = [];
  const p = await InProcessPipeline.start({
    services: { ...ns.services, ...options.services },
    ...(options.delayTier ? { delayTier: options.delayTier } : {}),
    ...(options.schedules ? { schedules: options.schedules } : {}),
    ...(options.generator !== undefined ? { generator: options.generator } : {}),
    ...(options.canary ? { canary: options.canary } : {}),
    ...(options.watchdog ? { watchdog: options.watchdog } : {}),
    ...(options.gauges ? { gauges: options.gauges } : {}),
    ...(options.outboxHeartbeat ? { outboxHeartbeat: options.outboxHeartbeat } : {}),
    ...(options.scheduleSla !== undefined ? { scheduleSla: options.scheduleSla } : {}),
    ...(options.outboxRelay !== undefined ? { outboxRelay: options.outboxRelay } : {}),
    id: ns.id,
    prefix: ns.prefix,
    schema: ns.schema,
    resourceClasses: RESOURCE_CLASSES,
    consoleDir: inject('consoleDir'),
    logLevel: process.env.KAIROS_TEST_LOG ?? 'warn',
    onDispatched: (record, atMs) => dispatched.push({ record, atMs }),
  });
  ns.defer(() => p.stop());
  return {
    ns,
    dispatched,
    pool: p.pool,
    codec: p.codec,
    topics: p.topics,
    commands: p.commands,
    schedules: p.schedules,
    apiUrl: p.apiUrl,
    apiKey: p.apiKey,
    api: p.api,
    delayTier: p.delayTier,
    tracker: p.tracker,
    worker: (options) => p.worker(options),
    newDelayTier: () => p.newDelayTier(),
    newTracker: () => p.newTracker(),
  };
}

/** Polls until check() is true (bounded), so waits are on observed state, never on sleeps. */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
