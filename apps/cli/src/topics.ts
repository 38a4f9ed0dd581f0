import { tailTopic, type TailRecord, type TailStart } from '@kairos/kafka';
import { Command, Option } from 'commander';
import { UsageError } from './config.js';
import { jsonOfRecord, kafkaContext, type KafkaContext } from './kafka-context.js';
import { countOf, instantOf } from './times.js';

interface TailOpts {
  from?: string;
  since?: string;
  last: string;
  partition?: string[];
  limit?: string;
  follow?: boolean;
}

/** --from and --since as where each partition starts. */
export function tailStart(o: TailOpts, now = Date.now()): TailStart {
  if (o.from !== undefined && o.since !== undefined) throw new UsageError('give --from or --since, not both');
  if (o.since !== undefined) return { timestamp: instantOf(o.since, '--since', now) };
  if (o.from === 'beginning') return { from: 'beginning' };
  if (o.from === undefined || o.from === 'end') return { from: 'end', last: countOf(o.last, '--last') };
  return { offset: countOf(o.from, '--from (beginning, end or an offset)') };
}

async function show(ctx: KafkaContext, topic: string, r: TailRecord, json: boolean): Promise<void> {
  const value = await ctx.decode(topic, r.value);
  const key = r.key?.toString('utf8') ?? null;
  const at = r.timestamp.toISOString();
  if (json) {
    const line = {
      topic,
      partition: r.partition,
      offset: r.offset,
      timestamp: at,
      key,
      headers: r.headers,
      value,
    };
    process.stdout.write(`${jsonOfRecord(line)}\n`);
    return;
  }
  const headers = Object.entries(r.headers).map(([k, v]) => `${k}=${v}`);
  process.stdout.write(
    `${topic}[${r.partition}]@${r.offset}  ${at}  key=${key ?? '∅'}\n` +
      (headers.length ? `  headers: ${headers.join('  ')}\n` : '') +
      `  ${jsonOfRecord(value, 2).replace(/\n/g, '\n  ')}\n`,
  );
}

export function topicsCommand(): Command {
  const topics = new Command('topics').description(
    'read Kairos topics in Kafka (needs the KAIROS_KAFKA_* and KAIROS_REGISTRY_* settings, not an API key)',
  );
  topics
    .command('tail <topic>')
    .description('print the records of a topic, Avro decoded through the registry, with their headers')
    .option('--from <where>', 'beginning, end, or an offset on every partition (default: end, minus --last)')
    .option(
      '--since <time>',
      'from the first record at or after a time: ISO 8601 or a duration ago (15m, 2h)',
    )
    .option('--last <n>', 'with --from end: the last n records of each partition', '10')
    .addOption(new Option('--partition <p...>', 'only these partitions'))
    .option('--limit <n>', 'stop after n records')
    .option('-f, --follow', 'keep printing new records until interrupted (Ctrl-C)')
    .action(async (topic: string, o: TailOpts, cmd: Command) => {
      const json = cmd.optsWithGlobals<{ json?: boolean }>().json === true;
      const start = tailStart(o);
      const partitions = o.partition?.map((p) => countOf(p, '--partition'));
      const limit = o.limit === undefined ? undefined : countOf(o.limit, '--limit');
      const ctx = kafkaContext(process.env);
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        const records = tailTopic(ctx.kafka, {
          topic,
          start,
          follow: o.follow === true,
          signal: stop.signal,
          ...(partitions ? { partitions } : {}),
          ...(limit === undefined ? {} : { limit }),
        });
        for await (const r of records) await show(ctx, topic, r, json);
      } catch (err) {
        if (err instanceof RangeError) throw new UsageError(err.message);
        throw err;
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
  return topics;
}
