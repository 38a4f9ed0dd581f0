#!/usr/bin/env node
// kairos: the operator's command line over the HTTP API. Environment read here (and in config.ts) only.
import { EnvError } from '@kairos/config';
import { GroupActiveError, UnknownTopicError } from '@kairos/kafka';
import { Command, CommanderError } from 'commander';
import { ApiError } from './api-client.js';
import { bootstrapCommand } from './bootstrap.js';
import { configFile, UsageError } from './config.js';
import { dlqCommand } from './dlq.js';
import { jobsCommand } from './jobs.js';
import { keysCommand } from './keys.js';
import { schedulesCommand } from './schedules.js';
import { statusCommand } from './status.js';
import { topicsCommand } from './topics.js';

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

const program = new Command('kairos')
  .description(
    `Kairos from the command line. The API key comes from KAIROS_API_KEY or ${configFile(process.env)}.`,
  )
  .option('--url <url>', 'the API (default: KAIROS_API_URL, the config file, or http://127.0.0.1:58090)')
  .option('--json', 'print JSON for scripts instead of tables')
  .exitOverride()
  .addCommand(jobsCommand())
  .addCommand(schedulesCommand())
  .addCommand(dlqCommand())
  .addCommand(keysCommand())
  .addCommand(topicsCommand())
  .addCommand(bootstrapCommand())
  .addCommand(statusCommand());

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
