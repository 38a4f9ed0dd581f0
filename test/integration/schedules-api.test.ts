import { expect, test } from 'vitest';
import { useNamespace } from '../support/namespace.js';
import { startPipeline } from '../support/pipeline.js';
import { api as call, type Problem, type RunView, type ScheduleView } from '../support/schedules.js';

const fields = (p: Problem) => (p.errors ?? []).map((e) => e.field).sort();

test('schedules over HTTP: validation, preview across DST, update with If-Match, list, pause, delete', async () => {
  const ns = await useNamespace('schedules-api');
  const p = await startPipeline(ns);
  const api = (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    call(p, method, path, body, headers);
  const problem = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
    call<Problem>(p, method, path, body, headers);

  // Every invalid field is named at once; nothing is created.
  const bad = await problem('POST', '/v1/schedules', {
    tenant: 'acme',
    cron: '61 * * * *',
    time_zone: 'Mars/Olympus',
    job: { type: 'x', resource_class: 'nope' },
    overlap: 'sometimes',
    colour: 'blue',
  });
  expect(bad.status).toBe(400);
  expect(bad.type).toContain('application/problem+json');
  expect(bad.json.code).toBe('VALIDATION');
  expect(fields(bad.json)).toEqual(['colour', 'cron', 'job.resource_class', 'overlap', 'time_zone']);
  expect((await api('GET', '/v1/schedules?tenant=acme')).json.schedules).toEqual([]);

  // Daily at 02:30 New York: 2026-03-08 has no 02:30 (spring forward): shifted to 03:00 EDT.
  const spec = {
    tenant: 'acme',
    cron: '30 2 * * *',
    time_zone: 'America/New_York',
    start_at: '2026-03-07T00:00:00-05:00',
    job: { type: 'report.daily', resource_class: 'default', payload: { report: 'sales' } },
    misfire: { kind: 'fire_all', max_count: 5 },
    overlap: 'skip',
  };
  const dry = await api('POST', '/v1/schedules:preview?count=3&after=2026-03-06T12:00:00Z', spec);
  expect(dry.status).toBe(200);
  expect((dry.json.fire_times as { local: string }[]).map((f) => f.local)).toEqual([
    '2026-03-07T02:30:00-05:00',
    '2026-03-08T03:00:00-04:00',
    '2026-03-09T02:30:00-04:00',
  ]);
  expect(dry.json.fire_times[1]).toMatchObject({
    instant: '2026-03-08T07:00:00.000Z',
    nominal: '2026-03-08T02:30:00[America/New_York]',
    kind: 'gap-shifted',
  });

  const created = await api('POST', '/v1/schedules', { ...spec, idempotency_key: 'sales-report' });
  expect(created.status).toBe(201);
  const s = created.json as ScheduleView;
  expect(s).toMatchObject({
    tenant: 'acme',
    cron: '30 2 * * *',
    time_zone: 'America/New_York',
    state: 'ACTIVE',
    version: 1,
    overlap: 'skip',
    misfire: { kind: 'fire_all', max_count: 5 },
    dst: { gap: 'shift', overlap: 'first' },
    jitter_ms: 0,
    idempotency_key: 'sales-report',
  });
  expect(s.next_fire.local).toMatch(/T0[23]:(30|00):00-0[45]:00$/);
  // The same idempotency key returns the first schedule.
  const again = await api('POST', '/v1/schedules', { ...spec, idempotency_key: 'sales-report' });
  expect(again.status).toBe(200);
  expect(again.json.id).toBe(s.id);

  // Its first occurrences exist at once (at least two ahead), routed by the schedule id.
  const runs = (await api('GET', `/v1/schedules/${s.id}/runs`)).json.runs as RunView[];
  expect(runs.length).toBeGreaterThanOrEqual(2);
  for (const r of runs) {
    expect(r).toMatchObject({ schedule_id: s.id, state: 'SCHEDULED', type: 'report.daily', shard: s.shard });
    expect(r.occurrence?.kind).toBe('regular');
  }
  const job = (await api('GET', `/v1/jobs/${runs[0]!.id}`)).json;
  expect(job.occurrence).toEqual(runs[0]!.occurrence);

  const preview = await api('GET', `/v1/schedules/${s.id}/preview?count=4&after=2026-03-06T12:00:00Z`);
  expect((preview.json.fire_times as { instant: string }[]).map((f) => f.instant)).toEqual([
    '2026-03-07T07:30:00.000Z',
    '2026-03-08T07:00:00.000Z',
    '2026-03-09T06:30:00.000Z',
    '2026-03-10T06:30:00.000Z',
  ]);
  for (const q of ['count=0', 'count=101', 'count=two', 'after=yesterday']) {
    const r = await api('GET', `/v1/schedules/${s.id}/preview?${q}`);
    expect(r.status).toBe(400);
    expect(r.json.code).toBe('VALIDATION');
  }

  // PATCH merges; If-Match with a stale version is a conflict.
  const patched = await api(
    'PATCH',
    `/v1/schedules/${s.id}`,
    { cron: '0 9 * * 1-5', jitter_ms: 60000 },
    {
      'if-match': '"1"',
    },
  );
  expect(patched.status).toBe(200);
  expect(patched.json).toMatchObject({ version: 2, cron: '0 9 * * 1-5', jitter_ms: 60000, overlap: 'skip' });
  const stale = await api('PATCH', `/v1/schedules/${s.id}`, { overlap: 'allow' }, { 'if-match': '1' });
  expect(stale.status).toBe(409);
  // Merged into {kind: fire_all, max_count: 5}: within also needs its window.
  const badPatch = await problem('PATCH', `/v1/schedules/${s.id}`, { misfire: { kind: 'within' } });
  expect(badPatch.status).toBe(400);
  expect(fields(badPatch.json)).toEqual(['misfire.window_ms']);
  const tenantChange = await problem('PUT', `/v1/schedules/${s.id}`, { ...spec, tenant: 'other' });
  expect(tenantChange.status).toBe(400);
  expect(fields(tenantChange.json)).toEqual(['tenant']);
  // The old future runs were cancelled and new ones generated at 09:00 New York.
  const after = (await api('GET', `/v1/schedules/${s.id}/runs?limit=100`)).json.runs as RunView[];
  const live = after.filter((r) => r.state === 'SCHEDULED');
  expect(live.length).toBeGreaterThanOrEqual(2);
  expect(after.filter((r) => r.state === 'CANCELLED').length).toBe(runs.length);
  for (const r of live) {
    const local = new Intl.DateTimeFormat('en-US', {
      timeZone: 'America/New_York',
      hour: '2-digit',
      hour12: false,
      minute: '2-digit',
    }).format(new Date(r.occurrence!.at));
    expect(local).toBe('09:00');
  }
  // Jitter: one fixed offset within ±jitter_ms for every run, the one the preview shows.
  const offsets = new Set(live.map((r) => Date.parse(r.due_at as string) - Date.parse(r.occurrence!.at)));
  expect(offsets.size).toBe(1);
  const [offset] = [...offsets];
  expect(Math.abs(offset!)).toBeLessThanOrEqual(60000);
  const jittered = (await api('GET', `/v1/schedules/${s.id}/preview?count=1`)).json.fire_times as {
    instant: string;
    fire_at: string;
  }[];
  expect(Date.parse(jittered[0]!.fire_at) - Date.parse(jittered[0]!.instant)).toBe(offset);

  // Listing pages by tenant.
  for (let i = 0; i < 3; i++) {
    expect((await api('POST', '/v1/schedules', { ...spec, tenant: 'paged' })).status).toBe(201);
  }
  const page1 = (await api('GET', '/v1/schedules?tenant=paged&limit=2')).json;
  expect(page1.schedules).toHaveLength(2);
  const page2 = (await api('GET', `/v1/schedules?tenant=paged&limit=2&after=${page1.next_after}`)).json;
  expect(page2.schedules).toHaveLength(1);
  expect(page2.next_after).toBeNull();
  expect((await api('GET', '/v1/schedules')).status).toBe(400);

  // Pause and delete; a deleted schedule refuses changes but stays readable.
  const paused = await api('POST', `/v1/schedules/${s.id}/pause`);
  expect(paused.json).toMatchObject({ state: 'PAUSED', version: 3, next_fire: null });
  expect((await api('POST', `/v1/schedules/${s.id}/pause`)).json.version).toBe(3); // no change
  const resumeBad = await api('POST', `/v1/schedules/${s.id}/resume`, { catch_up: 'yes' });
  expect(resumeBad.status).toBe(400);
  const deleted = await api('DELETE', `/v1/schedules/${s.id}`);
  expect(deleted.json.state).toBe('DELETED');
  expect((await api('GET', `/v1/schedules/${s.id}`)).json.state).toBe('DELETED');
  expect((await api('POST', `/v1/schedules/${s.id}/resume`)).status).toBe(409);
  expect((await api('POST', `/v1/schedules/${s.id}/trigger`)).status).toBe(409);
  const finalRuns = (await api('GET', `/v1/schedules/${s.id}/runs?limit=100`)).json.runs as RunView[];
  expect(finalRuns.filter((r) => r.state === 'SCHEDULED')).toEqual([]);

  // Unknown and malformed ids.
  expect((await api('GET', '/v1/schedules/0190b6c1-0000-7000-8000-000000000000')).status).toBe(404);
  const notUuid = await api('GET', '/v1/schedules/nope');
  expect(notUuid.status).toBe(400);
  expect(notUuid.json.code).toBe('VALIDATION');
  // Backfill validation: future end, reversed range, too many occurrences.
  const other = page1.schedules[0].id as string;
  const future = await problem('POST', `/v1/schedules/${other}/backfill`, {
    from: '2026-01-01T00:00:00Z',
    to: new Date(Date.now() + 86_400_000).toISOString(),
  });
  expect(future.status).toBe(400);
  expect(fields(future.json)).toEqual(['to']);
  const tooMany = await problem('POST', `/v1/schedules/${other}/backfill`, {
    from: '2020-01-01T00:00:00Z',
    to: '2025-01-01T00:00:00Z',
    max_count: 10,
  });
  expect(tooMany.status).toBe(400);
  expect(tooMany.json.errors?.[0]?.message).toContain('more than 10 occurrences');
}, 180_000);
