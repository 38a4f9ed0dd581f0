import { describe, expect, test } from 'vitest';
import {
  compileJobLimits,
  MAX_SLA_MS,
  NO_RUN_FACTS,
  parseScheduleSpec,
  scheduleHealth,
  scheduleRequestOf,
  slaAlert,
  slaBreached,
  slaSleepMs,
  type ScheduleRunFacts,
  type SlaSubject,
} from '@kairos/core';

const t = (s: string) => new Date(`2026-12-03T${s}Z`);
const subject: SlaSubject = { state: 'ACTIVE', slaMs: 60_000, slaSince: t('10:00:00') };
const facts = (f: Partial<ScheduleRunFacts>): ScheduleRunFacts => ({ ...NO_RUN_FACTS, ...f });

describe('the verdict of a schedule with an SLA', () => {
  test('nothing judged nor succeeded yet: unknown; a run judged on time or a success: ok', () => {
    expect(scheduleHealth(subject, NO_RUN_FACTS)).toBe('unknown');
    expect(scheduleHealth(subject, facts({ judgedUntil: t('10:01:00') }))).toBe('ok');
    expect(scheduleHealth(subject, facts({ lastSuccessAt: t('10:00:30') }))).toBe('ok');
    // Judged before the SLA was set (an earlier SLA): says nothing about this one.
    expect(scheduleHealth(subject, facts({ judgedUntil: t('09:59:00') }))).toBe('unknown');
  });

  test('a late run with no later success is a breach; a success of a later occurrence clears it', () => {
    const late = facts({ lateRuns: 1, lateOccurrenceAt: t('10:05:00'), judgedUntil: t('10:05:00') });
    expect(slaBreached(subject, late)).toBe(true);
    expect(scheduleHealth(subject, late)).toBe('late');
    // A success of an earlier run does not make up for it.
    const earlier = { ...late, lastSuccessAt: t('10:05:50'), lastSuccessOccurrenceAt: t('10:04:00') };
    expect(scheduleHealth(subject, earlier)).toBe('late');
    // The late run itself succeeding at last, or a later one: ok again.
    const itself = { ...late, lastSuccessAt: t('10:07:00'), lastSuccessOccurrenceAt: t('10:05:00') };
    expect(scheduleHealth(subject, itself)).toBe('ok');
    const later = { ...late, lastSuccessAt: t('10:06:10'), lastSuccessOccurrenceAt: t('10:06:00') };
    expect(scheduleHealth(subject, later)).toBe('ok');
  });

  test('no SLA, an SLA set after the late run, a paused or deleted schedule: never late', () => {
    const late = facts({ lateRuns: 3, lateOccurrenceAt: t('10:05:00') });
    expect(scheduleHealth({ ...subject, slaMs: null, slaSince: null }, late)).toBe('unknown');
    expect(slaBreached({ ...subject, slaSince: t('10:06:00') }, late)).toBe(false);
    expect(scheduleHealth({ ...subject, state: 'PAUSED' }, late)).toBe('unknown');
    expect(slaBreached({ ...subject, state: 'DELETED' }, late)).toBe(false);
  });

  test('the alert names the schedule and its tenant', () => {
    const a = slaAlert('0193a1b2-0000-7000-8000-000000000001', 'acme', 60_000, t('10:05:00'));
    expect(a.name).toBe('schedule_sla_missed');
    expect(a.labels).toEqual({ schedule: '0193a1b2-0000-7000-8000-000000000001', tenant: 'acme' });
    expect(a.summary).toContain('2026-12-03T10:05:00.000Z');
  });

  test('the check sleeps until the next deadline, within its bounds', () => {
    expect(slaSleepMs(2500, 1000, 10_000)).toBe(2500);
    expect(slaSleepMs(-300, 1000, 10_000)).toBe(1000);
    expect(slaSleepMs(3_600_000, 1000, 10_000)).toBe(10_000);
    expect(slaSleepMs(null, 1000, 10_000)).toBe(10_000);
  });
});

describe('sla_ms in a schedule request', () => {
  const limits = compileJobLimits();
  const now = new Date('2026-12-03T10:00:00Z');
  const base = {
    tenant: 'acme',
    cron: '* * * * *',
    time_zone: 'UTC',
    job: { type: 't', resource_class: 'io' },
  };

  test('optional (null), a whole number of ms from 1 s to 7 days, and it round-trips', () => {
    const none = parseScheduleSpec(base, limits, now);
    expect(none.ok && none.value.slaMs).toBe(null);
    const set = parseScheduleSpec({ ...base, sla_ms: 90_000 }, limits, now);
    if (!set.ok) throw new Error('expected a spec');
    expect(set.value.slaMs).toBe(90_000);
    expect(scheduleRequestOf(set.value).sla_ms).toBe(90_000);
    expect(scheduleRequestOf(none.ok ? none.value : set.value)).not.toHaveProperty('sla_ms');
    for (const bad of [0, -5, 999, 1500.5, MAX_SLA_MS + 1, '60000', null]) {
      const r = parseScheduleSpec({ ...base, sla_ms: bad }, limits, now);
      expect(r.ok, `sla_ms ${String(bad)}`).toBe(false);
      if (!r.ok) expect(r.errors.map((e) => e.field)).toEqual(['sla_ms']);
    }
  });
});
