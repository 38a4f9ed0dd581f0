import type { SourceRecordFields } from '@kairos/schemas';
import type { KafkaMessage } from 'kafkajs';
import { headerList } from './headers.js';

/** A record as a consumer read it: its topic, partition and message. */
export interface RecordSource {
  readonly topic: string;
  readonly partition: number;
  readonly message: KafkaMessage;
}

/**
 * Where a record was read and the record as it arrived, for the answer that sets it aside (a
 * rejection, a dead record). A value over `maxValueBytes` is left out (null): with its own fields
 * the answer must stay under the topic's message size limit, or it could never be published and
 * its partition would stall; the caller's message says so.
 */
export function sourceFields(source: RecordSource, maxValueBytes: number): SourceRecordFields {
  const { topic, partition, message } = source;
  const value = message.value ?? null;
  return {
    source_topic: topic,
    source_partition: partition,
    source_offset: Number(message.offset),
    source_timestamp: Number(message.timestamp),
    original_key: message.key ?? null,
    original_headers: headerList(message.headers),
    original_value: value !== null && value.length > maxValueBytes ? null : value,
  };
}

/** `text`, saying so when the record's value is over `maxValueBytes` (left out by sourceFields). */
export function withSizeNote(text: string, source: RecordSource, maxValueBytes: number): string {
  const size = source.message.value?.length ?? 0;
  return size > maxValueBytes ? `${text} (the original value, ${size} bytes, is too large to include)` : text;
}
