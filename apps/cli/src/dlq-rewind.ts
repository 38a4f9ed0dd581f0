import { moveGroupOffsets, type OffsetTarget } from '@kairos/kafka';
import { Command } from 'commander';
import { UsageError } from './config.js';
import { kafkaContext } from './kafka-context.js';
import { output } from './output.js';
import { countOf, instantOf } from './times.js';

interface RewindOpts {
  group: string;
  since?: string;
  offset?: string;
  earliest?: boolean;
  until?: string;
  partition?: string[];
  confirm?: boolean;
}

/** --since, --offset or --earliest as where the group goes: exactly one. */
export function rewindTarget(o: RewindOpts, now = Date.now()): OffsetTarget {
  const given = [o.since, o.offset, o.earliest].filter((v) => v !== undefined);
  if (given.length !== 1) throw new UsageError('give exactly one of --since, --offset, --earliest');
  if (o.since !== undefined) return { timestamp: instantOf(o.since, '--since', now) };
  if (o.offset !== undefined) return { offset: countOf(o.offset, '--offset') };
  return 'earliest';
}

/**
 * `kairos dlq rewind`: a consumer group of `kairos.dlq.<class>` (an alerting or audit service of
 * the user's) reads a time range of dead letters again, like `kafka-consumer-groups.sh
 * --reset-offsets --to-datetime`. Kairos's own jobs are not touched: that is `dlq replay`.
 */
export function rewindCommand(): Command {
  return new Command('rewind')
    .argument('<class>', 'the resource class whose kairos.dlq.<class> topic the group reads')
    .description(
      "move a consumer group of kairos.dlq.<class> back, so it reads those dead letters again: a dry run unless --confirm; the group's consumers must be stopped",
    )
    .requiredOption('--group <group>', 'the consumer group to move')
    .option('--since <time>', 'to the first record at or after a time: ISO 8601 or a duration ago (2h)')
    .option('--offset <n>', 'to this offset on every partition (clamped to the log)')
    .option('--earliest', 'to the start of the log')
    .option('--until <time>', 'the end of the range: counted per partition, so you know what the range holds')
    .option('--partition <p...>', 'only these partitions')
    .option('--confirm', 'move the group (without it: a dry run, nothing changes)')
    .action(async (rc: string, o: RewindOpts, cmd: Command) => {
      const out = output(cmd.optsWithGlobals<{ json?: boolean }>().json === true);
      const target = rewindTarget(o);
      const until = o.until === undefined ? undefined : instantOf(o.until, '--until');
      const partitions = o.partition?.map((p) => countOf(p, '--partition'));
      const ctx = kafkaContext(process.env);
      if (!ctx.env.resourceClasses.includes(rc))
        throw new UsageError(`unknown resource class ${rc}: one of ${ctx.env.resourceClasses.join(', ')}`);
      const topic = ctx.topics.dlq(rc);
      const moves = await moveGroupOffsets(ctx.kafka, {
        group: o.group,
        topic,
        target,
        apply: o.confirm === true,
        ...(partitions ? { partitions } : {}),
        ...(until === undefined ? {} : { until }),
      });
      const summary = { group: o.group, topic, applied: o.confirm === true, partitions: moves };
      if (out.data(summary)) return;
      out.table(
        moves.map((m) => ({
          ...m,
          from: m.from ?? '(none)',
          in_range: until === undefined ? '' : m.inRange,
          to_read: m.toRead,
        })),
        ['partition', 'from', 'to', 'end', 'to_read', 'in_range'],
      );
      const total = moves.reduce((s, m) => s + m.toRead, 0);
      out.line(
        o.confirm
          ? `${o.group} moved on ${topic}: it reads ${total} record(s) again when its consumers start.`
          : `dry run: ${o.group} would read ${total} record(s) of ${topic} again; nothing changed. Add --confirm to move it.`,
      );
    });
}
