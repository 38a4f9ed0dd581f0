import { Counter, type Registry } from 'prom-client';

/** Records of internal topics set aside on kairos.dead-records, by source topic and reason. */
export type DeadRecordMetric = Counter<'topic' | 'reason'>;

export function createDeadRecordMetric(registry: Registry): DeadRecordMetric {
  return new Counter({
    name: 'kairos_dead_records_total',
    help: 'Records of internal topics set aside on kairos.dead-records (never applied), by source topic and reason',
    labelNames: ['topic', 'reason'],
    registers: [registry],
  });
}
