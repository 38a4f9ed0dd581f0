#!/usr/bin/env node
// kairos: the operator's command line over the HTTP API. Environment read here (and in config.ts) only.
import { EnvError } from '@kairos/config';
import { GroupActiveError, UnknownTopicError } from '@kairos/kafka';
import { Command, CommanderError } from 'commander';
import { ApiError } from './api-client.js';
import { UsageError } from './config.js';
import { kairosProgram } from './program.js';

/** Exit codes that mean something: scripts branch on them. */
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  auth: 3,
  notFound: 4,
  conflict: 5,
  rateLimited: 6,
} as const;

function exitCodeOf(err: unknown): number {
  if (err instanceof UsageError || err instanceof EnvError) return EXIT.usage;
  if (err instanceof UnknownTopicError) return EXIT.notFound;
  if (err instanceof GroupActiveError) return EXIT.conflict;
  if (!(err instanceof ApiError)) return EXIT.failed;
  if (err.status === 401 || err.status === 403) return EXIT.auth;
  if (err.status === 404) return EXIT.notFound;
  if (err.status === 409) return EXIT.conflict;
  if (err.status === 429) return EXIT.rateLimited;
  return err.status < 500 ? EXIT.usage : EXIT.failed;
}

const program = kairosProgram(process.env);

// Commands added with addCommand do not inherit the override: every one exits through the handler below.
const everyCommand = (c: Command): Command[] => [c, ...c.commands.flatMap(everyCommand)];
for (const c of everyCommand(program)) c.exitOverride();

program.parseAsync(process.argv).catch((err: unknown) => {
  if (err instanceof CommanderError) {
    process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    return;
  }
  const what = err instanceof EnvError ? 'configuration error: ' : '';
  process.stderr.write(`kairos: ${what}${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = exitCodeOf(err);
});
