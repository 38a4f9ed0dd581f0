import { isKairosError } from '@kairos/core';
import { headerString, type AvroCodec } from '@kairos/kafka';
import type { Logger } from '@kairos/observability';
import type { HotSet } from '@kairos/redis';
import type { JobEventRecord } from '@kairos/schemas';
import type { KafkaMessage } from 'kafkajs';
import type { Ownership } from './ownership.js';
import { hotRecord, type HotRecord } from './record.js';

/**
 * Applies one kairos.job-events message to its partition's hot set. Returns false if this
 * instance no longer owns the partition (its epoch went stale), true otherwise.
 */
export async function applyJobEvent(
  deps: {
    codec: AvroCodec;
    hot: HotSet;
    ownership: Ownership;
    log: Logger;
    onScheduled?: ((record: HotRecord, atMs: number) => void) | undefined;
  },
  topic: string,
  partition: number,
  message: KafkaMessage,
): Promise<boolean> {
  const epochP = deps.ownership.epoch(partition);
  if (!epochP) return false;
  const epoch = await epochP;
  if (!message.value) return true;
  let event: JobEventRecord;
  try {
    event = (await deps.codec.decode(topic, message.value)) as JobEventRecord;
  } catch (err) {
    if (!isKairosError(err, 'UNDECODABLE')) throw err; // registry down: the batch is retried
    // A value that does not decode can never be applied; skipping it keeps the partition moving.
    deps.log.error({ err, partition, offset: message.offset }, 'undecodable job event skipped');
    return true;
  }
  try {
    deps.log.debug({ partition, type: event.event_type, job: event.job_id, due: event.due_at }, 'job event');
    if (event.event_type === 'SCHEDULED') {
      const record = hotRecord(event, headerString(message.headers, 'traceparent') ?? null);
      const added = await deps.hot.schedule(partition, epoch, {
        jobId: event.job_id,
        dueAtMs: event.due_at,
        version: event.version,
        record: JSON.stringify(record),
      });
      if (added) deps.onScheduled?.(record, Date.now());
    } else {
      await deps.hot.cancel(partition, epoch, event.job_id, event.version);
    }
    return true;
  } catch (err) {
    if (isKairosError(err, 'STALE_EPOCH')) {
      // Either Redis lost our state (rebuilt now; the event is applied again on refetch) or
      // another instance owns the partition (then we stop acting for it).
      await deps.ownership.onStale(partition, epoch);
      return false;
    }
    throw err;
  }
}
