import type { Command } from 'commander';
import { ApiClient } from './api-client.js';
import { loadConfig } from './config.js';
import { output, type Out } from './output.js';

export interface Context {
  readonly api: ApiClient;
  readonly out: Out;
}

/** The API client and output of a command, from its global options and the environment. */
export function contextOf(cmd: Command): Context {
  const o = cmd.optsWithGlobals<{ json?: boolean; url?: string }>();
  return { api: new ApiClient(loadConfig(process.env, { url: o.url })), out: output(o.json === true) };
}

/** The search filters every list of jobs takes, as options. */
export function withJobFilters(cmd: Command): Command {
  return cmd
    .option('--tenant <tenant>', 'the tenant (a key of every tenant must name one)')
    .option('--type <types>', 'job types, comma-separated')
    .option('--class <classes>', 'resource classes, comma-separated')
    .option('--schedule <id>', 'runs of this schedule')
    .option('--failure-class <classes>', 'transient, throttled, permanent, ambiguous')
    .option('--error <text>', 'text the last error contains')
    .option('--due-after <time>')
    .option('--due-before <time>')
    .option('--created-after <time>')
    .option('--created-before <time>')
    .option('--finished-after <time>')
    .option('--finished-before <time>');
}

/** The filter options as the API's query parameters. */
export function jobFilters(o: Record<string, string | undefined>): Record<string, string | undefined> {
  return {
    tenant: o.tenant,
    type: o.type,
    resource_class: o.class,
    schedule_id: o.schedule,
    failure_class: o.failureClass,
    error: o.error,
    due_after: o.dueAfter,
    due_before: o.dueBefore,
    created_after: o.createdAfter,
    created_before: o.createdBefore,
    finished_after: o.finishedAfter,
    finished_before: o.finishedBefore,
  };
}
