import { isFailureClass, UNSTARTED, type ReportedFailure } from '@kairos/core';
import type { ResultRecord, StartRecord } from '@kairos/db';
import {
  boundedText,
  describeProblems,
  taskResultProblems,
  type DeadRecordVerdict,
  type RecordDecoder,
} from '@kairos/kafka';
import type { TaskResultRecord } from '@kairos/schemas';
import type { KafkaMessage } from 'kafkajs';

/** Longest error class and error message stored of a result (the SDK sends at most 4,096 characters). */
const MAX_ERROR_CLASS_CHARS = 256;
const MAX_ERROR_MESSAGE_CHARS = 8192;

/** A result record that decoded as a TaskResult of the current schema and passed its checks. */
export interface AcceptedResult {
  readonly message: KafkaMessage;
  readonly record: TaskResultRecord;
}

/** A record that can never be applied, and why. */
export interface RefusedRecord {
  readonly message: KafkaMessage;
  readonly verdict: DeadRecordVerdict;
}

/**
 * Decodes a batch's values: each is accepted, or refused with its reason (it does not decode, is
 * not a TaskResult, or has a field out of range). A registry outage throws (the batch is retried).
 */
export async function decodeResults(
  decoder: RecordDecoder<TaskResultRecord>,
  messages: readonly KafkaMessage[],
): Promise<{ accepted: AcceptedResult[]; refused: RefusedRecord[] }> {
  const accepted: AcceptedResult[] = [];
  const refused: RefusedRecord[] = [];
  for (const message of messages) {
    if (!message.value) continue; // a tombstone: nothing to apply
    const d = await decoder.decode(message.value);
    if (!d.ok) {
      refused.push({ message, verdict: { reason: d.reason, message: d.message, schemaId: d.schemaId } });
      continue;
    }
    const problems = taskResultProblems(d.record);
    if (problems.length > 0) {
      const text = `task result out of range: ${describeProblems(problems)}`;
      refused.push({
        message,
        verdict: { reason: 'INVALID_FIELD', message: text, fields: problems, schemaId: d.schemaId },
      });
      continue;
    }
    accepted.push({ message, record: d.record });
  }
  return { accepted, refused };
}

/**
 * A batch's reports: starts and outcomes. A start whose attempt's outcome is in the same batch
 * is dropped, since the outcome records the start too (one write per job instead of two).
 */
export function reportsOf(results: readonly AcceptedResult[]): {
  starts: StartRecord[];
  results: ResultRecord[];
} {
  const records = results.map((r) => r.record);
  const finished = new Set(
    records.filter((r) => r.outcome !== 'STARTED').map((r) => `${r.job_id}/${r.fence}`),
  );
  return {
    starts: records
      .filter((r) => r.outcome === 'STARTED' && !finished.has(`${r.job_id}/${r.fence}`))
      .map(toStart),
    results: records.flatMap((r) => (r.outcome === 'STARTED' ? [] : [toResult(r, r.outcome)])),
  };
}

function toStart(r: TaskResultRecord): StartRecord {
  return {
    jobId: r.job_id,
    fence: r.fence,
    attempt: r.attempt,
    epoch: r.epoch,
    workerId: r.worker_id,
    startedAt: new Date(r.started_at),
  };
}

/** Results of workers older than failure classes carry none: ambiguous, the safe default. */
function failureClassOf(r: TaskResultRecord): ReportedFailure {
  const declared: unknown = r.error?.failure_class;
  if (declared === UNSTARTED) return UNSTARTED;
  return isFailureClass(declared) ? declared : 'ambiguous';
}

function toResult(r: TaskResultRecord, outcome: ResultRecord['outcome']): ResultRecord {
  const error = r.error;
  return {
    jobId: r.job_id,
    dueAt: new Date(r.due_at),
    fence: r.fence,
    attempt: r.attempt,
    epoch: r.epoch,
    outcome,
    errorClass: error ? boundedText(error.error_class, MAX_ERROR_CLASS_CHARS) : null,
    errorMessage: error ? boundedText(error.message, MAX_ERROR_MESSAGE_CHARS) : null,
    failureClass: r.outcome === 'FAILED' ? failureClassOf(r) : null,
    retryAfterMs: error?.retry_after_ms ?? null,
    workerId: r.worker_id,
    startedAt: new Date(r.started_at),
    finishedAt: new Date(r.finished_at),
  };
}
