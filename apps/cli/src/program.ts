import { Command } from 'commander';
import { bootstrapCommand } from './bootstrap.js';
import { configFile } from './config.js';
import { dlqCommand } from './dlq.js';
import { jobsCommand } from './jobs.js';
import { keysCommand } from './keys.js';
import { schedulesCommand } from './schedules.js';
import { statusCommand } from './status.js';
import { workersCommand } from './workers.js';
import { topicsCommand } from './topics.js';

/**
 * The `kairos` command tree, unparsed (`env` only names the config file in the help): main.ts
 * runs it, and the runbooks' test checks every command and flag they cite against it.
 */
export function kairosProgram(env: NodeJS.ProcessEnv): Command {
  return new Command('kairos')
    .description(`Kairos from the command line. The API key comes from KAIROS_API_KEY or ${configFile(env)}.`)
    .option('--url <url>', 'the API (default: KAIROS_API_URL, the config file, or http://127.0.0.1:58090)')
    .option('--json', 'print JSON for scripts instead of tables')
    .exitOverride()
    .addCommand(jobsCommand())
    .addCommand(schedulesCommand())
    .addCommand(dlqCommand())
    .addCommand(keysCommand())
    .addCommand(topicsCommand())
    .addCommand(bootstrapCommand())
    .addCommand(statusCommand())
    .addCommand(workersCommand());
}
