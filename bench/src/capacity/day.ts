import { seededRandom } from '@kairos/ops';

/**
 * A synthetic day of a multi-tenant Kairos, minute by minute: how many jobs are created and fall
 * due. Tenants differ in size (Zipf) and time zone; each has one-off jobs following its local
 * working day and cron schedules (hourly, half of them at :00, every 5 minutes, daily at local midnight with
 * 15 minutes of jitter), all created a lead time before they are due; on top, one
 * herd of jobs all due at 00:00 UTC, created through the day before and drained at a fixed rate.
 */

export interface DayOptions {
  /** Jobs falling due per second, averaged over the day, the herd aside. */
  readonly meanPerS: number;
  readonly tenants: number;
  /** Jobs in the midnight herd, and the rate it drains at (jobs/s). */
  readonly herdJobs: number;
  readonly herdPerS: number;
  /** Minutes between a one-off job's creation and its due time. */
  readonly leadMinutes: number;
  /** The delay tier's lookahead: jobs due within it wait in the hot sets, minutes. */
  readonly lookaheadMinutes: number;
  readonly seed: number;
}

export const DEFAULT_DAY: DayOptions = {
  meanPerS: 100_000,
  tenants: 300,
  herdJobs: 10_000_000,
  herdPerS: 41_000,
  leadMinutes: 10,
  lookaheadMinutes: 60,
  seed: 42,
};

export interface Minute {
  readonly minute: number;
  /** Jobs per second over this minute. */
  readonly created: number;
  readonly due: number;
  /** Jobs waiting in the hot sets at the minute's start. */
  readonly hot: number;
}

const MINUTES = 24 * 60;
const ZONES = [-8, -5, 0, 1, 3, 5.5, 8, 9];

const wrap = (m: number) => ((Math.round(m) % MINUTES) + MINUTES) % MINUTES;

/** One tenant's jobs due per minute (unscaled): a working-day curve plus its cron spikes. */
function tenantDue(zoneHours: number, rnd: () => number): Float64Array {
  const due = new Float64Array(MINUTES);
  const cronShare = 0.1 + 0.3 * rnd();
  for (let m = 0; m < MINUTES; m++) {
    const localHour = (m / 60 + zoneHours + 24) % 24;
    // Busiest mid-afternoon local time, a tenth of it at night.
    due[m] = (1 - cronShare) * (0.55 + 0.45 * Math.cos(((localHour - 15) / 24) * 2 * Math.PI)) ** 2;
  }
  // Of the cron volume: 60 % hourly, 30 % every 5 minutes, 10 % daily
  // at local midnight, spread over 15 minutes by jitter.
  const hourly = cronShare * 0.6 * 60;
  const fiveMin = cronShare * 0.3 * 5;
  const daily = (cronShare * 0.1 * MINUTES) / 15;
  // Half the tenants run their hourly schedules at :00, the others at a minute of their own.
  const hourlyAt = rnd() < 0.5 ? 0 : Math.floor(rnd() * 60);
  for (let m = hourlyAt; m < MINUTES; m += 60) due[m] = (due[m] ?? 0) + hourly;
  for (let m = 0; m < MINUTES; m += 5) due[m] = (due[m] ?? 0) + fiveMin;
  for (let k = 0; k < 15; k++) {
    const m = wrap(-zoneHours * 60 + k);
    due[m] = (due[m] ?? 0) + daily;
  }
  return due;
}

/** Jobs due per minute over all tenants, scaled to the mean, the herd not included. */
function tenantsDue(o: DayOptions): Float64Array {
  const rnd = seededRandom(o.seed);
  const total = new Float64Array(MINUTES);
  for (let t = 1; t <= o.tenants; t++) {
    const weight = 1 / t ** 1.1; // Zipf: a few large tenants, a long tail
    const zone = ZONES[Math.floor(rnd() * ZONES.length)] ?? 0;
    const due = tenantDue(zone, rnd);
    for (let m = 0; m < MINUTES; m++) total[m] = (total[m] ?? 0) + weight * (due[m] ?? 0);
  }
  const sum = total.reduce((a, b) => a + b, 0);
  const scale = (o.meanPerS * 60 * MINUTES) / sum;
  return total.map((v) => v * scale);
}

/** Herd jobs in the hot sets at minute m: all of them from a lookahead before midnight, then those not yet drained. */
function herdHot(o: DayOptions, herdDue: Float64Array, m: number): number {
  if (m >= MINUTES - o.lookaheadMinutes) return o.herdJobs;
  let drained = 0;
  for (let k = 0; k < m; k++) drained += herdDue[k] ?? 0;
  return Math.max(0, o.herdJobs - drained);
}

/** The day, minute by minute (jobs per second in each minute; hot jobs at its start). */
export function simulateDay(o: DayOptions = DEFAULT_DAY): Minute[] {
  const due = tenantsDue(o);
  const created = new Float64Array(MINUTES);
  // One-off jobs and cron runs alike are created ahead: lead minutes for one-offs, an hour for
  // generated runs; the split does not change the totals, so both use the lead time here.
  for (let m = 0; m < MINUTES; m++)
    created[wrap(m - o.leadMinutes)] = (created[wrap(m - o.leadMinutes)] ?? 0) + (due[m] ?? 0);
  const herdDue = new Float64Array(MINUTES);
  let left = o.herdJobs;
  for (let m = 0; left > 0; m++) {
    const n = Math.min(left, o.herdPerS * 60);
    herdDue[m] = n;
    left -= n;
  }
  const herdCreatedPerMin = o.herdJobs / MINUTES;
  return Array.from({ length: MINUTES }, (_, m) => {
    let hot = 0;
    for (let k = 0; k < Math.min(o.lookaheadMinutes, o.leadMinutes); k++) hot += due[wrap(m + k)] ?? 0;
    return {
      minute: m,
      created: ((created[m] ?? 0) + herdCreatedPerMin) / 60,
      due: ((due[m] ?? 0) + (herdDue[m] ?? 0)) / 60,
      hot: hot + herdHot(o, herdDue, m),
    };
  });
}
