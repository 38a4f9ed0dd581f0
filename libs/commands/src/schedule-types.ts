import type { Job, PreviewEntry, Schedule } from '@kairos/core';
import type { HandlerOptions } from './handler-options.js';
import type { GenerationSettings } from './schedule-generation.js';

export interface ScheduleCommandsOptions extends HandlerOptions {
  /**
   * An occurrence at most this late when it comes due is on time; later, its schedule's misfire
   * policy decides. Stored with each schedule at creation and update. Default: 5,000 ms.
   */
  readonly misfireToleranceMs?: number;
  /** Generation ahead (the first occurrences are generated in the creating transaction). */
  readonly generation?: Partial<GenerationSettings>;
  /** Backfill: most runs per request (default 1,000) and runs coming due per second (default 10). */
  readonly backfill?: { readonly maxCount?: number; readonly ratePerSec?: number };
  /** Most fire times one preview returns. Default: 100. */
  readonly maxPreview?: number;
}

/** Who asks: a tenant scopes every command (another tenant's schedule is NOT_FOUND). */
export interface ScheduleContext {
  readonly tenantId?: string;
  readonly traceparent?: string | null;
  /**
   * Applies a change (update, pause, resume, delete, trigger) at most once per (tenantId,
   * requestKey), as the job commands do: a repeat changes nothing and answers with the schedule
   * (and a trigger's run) as it is now, `applied: false`. Needs tenantId.
   */
  readonly requestKey?: string;
}

export interface ScheduleCreateResult {
  readonly schedule: Schedule;
  /** False when the idempotency key matched an existing schedule, which is returned instead. */
  readonly created: boolean;
}

export interface TriggerResult {
  readonly job: Job;
  readonly created: boolean;
}

export interface PreviewResult {
  readonly schedule: Schedule;
  readonly entries: readonly PreviewEntry[];
}

/** A change of an existing schedule, as every ingress asks for it (bodies as the HTTP API takes them). */
export type ScheduleChange =
  | {
      readonly kind: 'update';
      readonly id: string;
      /** The new rules (a create body without idempotency_key), or with `merge` a JSON merge patch. */
      readonly body: unknown;
      readonly merge?: boolean;
      /** If-Match: refuse (CONFLICT) unless the schedule is at this version. */
      readonly expectedVersion?: number;
    }
  | { readonly kind: 'pause'; readonly id: string }
  | { readonly kind: 'resume'; readonly id: string; readonly body?: unknown }
  | { readonly kind: 'delete'; readonly id: string }
  | { readonly kind: 'trigger'; readonly id: string; readonly body?: unknown };

/** The command name of each change, as the request ledger records it. */
export const SCHEDULE_CHANGE_COMMANDS = {
  update: 'UpdateSchedule',
  pause: 'PauseSchedule',
  resume: 'ResumeSchedule',
  delete: 'DeleteSchedule',
  trigger: 'TriggerSchedule',
} as const satisfies Record<ScheduleChange['kind'], string>;

export interface ScheduleChangeResult {
  /** The schedule after the change (for a repeat: as it is now). */
  readonly schedule: Schedule;
  /** The run a trigger created (for a repeat: the run it created first, as it is now); else null. */
  readonly job: Job | null;
  /**
   * False when nothing was done because the request was a repeat: its request key had been applied
   * before, or (trigger) its idempotency key had created the run before. Pausing a paused schedule
   * (or resuming an active one, deleting a deleted one) is applied, and changes nothing.
   */
  readonly applied: boolean;
}
