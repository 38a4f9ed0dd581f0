import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { expect, test } from 'vitest';
import { kairosProgram } from '../src/program.js';

// The runbooks are read at 3 AM and pasted as they are: every `kairos` command and flag they cite
// must be one the CLI has, so a renamed flag fails here instead of in an incident.
const RUNBOOKS = resolve(import.meta.dirname, '../../../ops/runbooks');

/** Every `npm run kairos -- …` invocation in the runbooks, with the file it is in. */
function citedInvocations(): { file: string; args: string }[] {
  return readdirSync(RUNBOOKS)
    .filter((f) => f.endsWith('.md'))
    .flatMap((file) =>
      [...readFileSync(resolve(RUNBOOKS, file), 'utf8').matchAll(/npm run kairos -- ([^`#\n]+)/g)].map(
        (m) => ({
          file,
          args: (m[1] ?? '').trim(),
        }),
      ),
    );
}

/** Words of a shell line, quoted parts kept whole (enough for the runbooks' plain commands). */
const words = (line: string): string[] => [...line.matchAll(/"[^"]*"|'[^']*'|\S+/g)].map((m) => m[0]);

const flagsOf = (c: Command): string[] =>
  c.options.flatMap((o) => [o.long, o.short]).filter((f) => f !== undefined);

/**
 * Whether a command with subcommands also runs by itself (`kairos workers` lists, `kairos workers
 * retire` retires). Commander keeps the action private; were that to change, this says false and
 * the runbooks' citations of such commands fail here, visibly.
 */
const runsAlone = (c: Command): boolean => typeof Reflect.get(c, '_actionHandler') === 'function';

/** Why `args` is not a command line of `program`, or undefined when it is. */
function problemOf(program: Command, args: string): string | undefined {
  let cmd = program;
  const flags = new Set([...flagsOf(program), '--help', '-h']);
  for (const word of words(args)) {
    if (word.startsWith('-')) {
      const flag = word.split('=')[0] ?? word;
      if (!flags.has(flag)) return `${flag} is not a flag of \`${cmd.name()}\``;
      continue;
    }
    const sub = cmd.commands.find((c) => c.name() === word);
    if (!sub) continue; // an argument or a flag's value
    cmd = sub;
    for (const f of flagsOf(sub)) flags.add(f);
  }
  if (cmd.commands.length > 0 && !runsAlone(cmd)) return `\`${cmd.name()}\` needs a subcommand`;
  return undefined;
}

test('the runbooks cite kairos commands, and only commands and flags the CLI has', () => {
  const cited = citedInvocations();
  expect(cited.length).toBeGreaterThan(20);
  const program = kairosProgram({});
  const problems = cited.flatMap(({ file, args }) => {
    const p = problemOf(program, args);
    return p ? [`${file}: kairos ${args}: ${p}`] : [];
  });
  expect(problems).toEqual([]);
});

test('a misspelt flag or a missing subcommand is caught', () => {
  const program = kairosProgram({});
  expect(problemOf(program, 'dlq replay --class io --rate 5 --confirm')).toBeUndefined();
  expect(problemOf(program, '--json topics tail kairos.dlq.io --last 5')).toBeUndefined();
  expect(problemOf(program, 'dlq replay --klass io')).toMatch(/--klass is not a flag/);
  expect(problemOf(program, 'jobs list --catch-up')).toMatch(/--catch-up is not a flag/);
  expect(problemOf(program, 'dlq')).toMatch(/needs a subcommand/);
});
